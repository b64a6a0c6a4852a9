// The feature-flag service's Koa app (port 3002; paths include /api/v1 and /ofrep/v1). Each app
// owns one flag cache (with its own Redis subscriber) and rate-limit connection, released by the
// ServiceApp's close() when the HTTP server serving it closes.
import { consolePages } from '../platform/http/console-pages.ts'
import { managementCors } from '../platform/http/management-cors.ts'
import { logger } from '../platform/logger.ts'
import type { Platform } from '../platform/platform.ts'
import { createServiceApp } from '../platform/service-app.ts'
import type { ServiceApp } from '../platform/service.ts'
import { evaluateHotRoute } from './sdk/evaluate-fast-path.ts'
import { evaluateRouter } from './sdk/evaluate-routes.ts'
import { evaluationCors, isEvaluationPath } from './sdk/evaluation-cors.ts'
import { FlagCache } from './sdk/flag-cache.ts'
import { ofrepRouter } from './sdk/ofrep-routes.ts'
import { flagsRouter } from './flag-routes.ts'
import { segmentsRouter } from './segment-routes.ts'
import { environmentsRouter } from './environment-routes.ts'
import { evaluationGate } from './sdk/sdk-auth.ts'
import { historyRouter } from './history-routes.ts'
import { changeHooksRouter } from './change-hook-routes.ts'
import { accountKeyRouter } from '../platform/account-key-routes.ts'
import { consoleSessionRouter } from '../platform/http/console-session-routes.ts'
import { FLAGS_LIMITS } from '../platform/plans.ts'
import { eventsRouter, ProjectEvents } from './console-events.ts'
import { playgroundRouter } from './playground-routes.ts'
import { revertRouter } from './revert-routes.ts'
import { ChangeHub } from './sdk/change-hub.ts'
import { StreamSlots } from './sdk/stream-slots.ts'
import { streamRouter } from './sdk/stream-routes.ts'
import { flagSetRouter } from './sdk/flag-set-routes.ts'
import { USAGE_PATH, usageRouter as usageReportRouter } from './sdk/usage-routes.ts'
import { startUsageFlush } from './sdk/usage-counter.ts'
import { flagUsageRouter } from './usage-routes.ts'

/** The console's deep links (its router's paths); anything else that is not the API stays a JSON 404. */
export const CONSOLE_PATHS = ['/projects', '/sign-in', '/sign-up', '/account']

export function createFlagsApp(platform: Platform): ServiceApp {
  const cache = new FlagCache(platform)
  const gate = evaluationGate(platform, cache)
  const hub = new ChangeHub(cache)
  const slots = new StreamSlots(platform)
  const events = new ProjectEvents(platform.db, cache)
  const pages = consolePages({ name: 'flags', title: 'Feature flags · queueworks', paths: CONSOLE_PATHS })
  // Built (when missing or stale) as the service starts, so the first visit does not wait for it.
  pages.bundle.current().catch((err) => logger.warn({ err: String(err) }, 'console bundle not built at start; the first request tries again'))
  const app = createServiceApp(platform, {
    service: 'flags',
    jsonLimit: '1mb',
    // OFREP reads its own body so that malformed JSON gets the protocol's PARSE_ERROR answer; the
    // usage batch so that a flag named "__proto__" can be reported (sdk/usage-routes.ts).
    rawPath: (path) => path.startsWith('/ofrep/') || path === USAGE_PATH,
    hotRoutes: [evaluateHotRoute(cache, gate)],
    // The web console (src/console/flags/): its page at / and its deep links, and its bundle.
    middleware: [pages],
    // Browsers: the evaluation API per project (any origin by default), the rest only for the
    // operator's listed front-ends (CORS_MANAGEMENT_ORIGINS; none by default).
    beforeBody: [evaluationCors(), managementCors(platform.config.CORS_MANAGEMENT_ORIGINS, { skip: isEvaluationPath })],
    routers: [consoleSessionRouter(platform, 'flags'), accountKeyRouter(platform, 'flags', (a) => ({ plan: a.plan, limits: { ...FLAGS_LIMITS[a.plan] } })), flagsRouter(platform, cache), segmentsRouter(platform, cache), environmentsRouter(platform, cache), historyRouter(platform), changeHooksRouter(platform), playgroundRouter(platform), revertRouter(platform, cache), eventsRouter(platform, events, slots), evaluateRouter(cache, gate), ofrepRouter(cache, gate.admit, platform.config), flagSetRouter(cache, gate.admit), usageReportRouter(cache, gate.admit, platform.db), flagUsageRouter(platform), streamRouter(cache, gate.admit, hub, slots, { heartbeatMs: platform.config.FLAGS_STREAM_HEARTBEAT_MS })],
  })
  const usageFlush = startUsageFlush(platform.db, platform.config.FLAGS_USAGE_FLUSH_MS)
  cache.start().catch((err) => logger.error({ err: String(err) }, 'flags cache subscriber failed to start'))
  return {
    app,
    async close() {
      gate.close()
      await usageFlush.stop().catch(() => {})
      hub.close()
      events.close()
      slots.close()
      await cache.close()
    },
  }
}
