// The webhook-capture service's Koa app (port 3003): capture under /hook/ (raw bodies, read by
// the capture itself), the management API under /api/v1 (with the shared checkout), the
// inspection page under /inspect/, the live event streams (one Redis subscriber per app), and the
// web console (src/console/webhooks/) at / and its deep links.
import { consolePages } from '../platform/http/console-pages.ts'
import { logger } from '../platform/logger.ts'
import type { Platform } from '../platform/platform.ts'
import { createServiceApp } from '../platform/service-app.ts'
import type { ServiceApp } from '../platform/service.ts'
import { accountKeyRouter } from '../platform/account-key-routes.ts'
import { consoleSessionRouter } from '../platform/http/console-session-routes.ts'
import { captureMiddleware } from './capture-ingress.ts'
import { forwardingRouter } from './forwarding-routes.ts'
import { harRouter } from './har-routes.ts'
import { inspectRouter } from './inspect-routes.ts'
import { LiveHub } from './live/live-hub.ts'
import { liveRouter } from './live-routes.ts'
import { endpointsRouter } from './endpoint-routes.ts'

/** The console's deep links (its router's paths): none under /api, /hook, /inspect or /static. */
export const CONSOLE_PATHS = ['/endpoints', '/sign-in', '/account']

export function createWebhooksApp(platform: Platform): ServiceApp {
  const hub = new LiveHub(platform)
  const pages = consolePages({ name: 'webhooks', title: 'Webhooks · queueworks', paths: CONSOLE_PATHS })
  // Built (when missing or stale) as the service starts, so the first visit does not wait for it.
  pages.bundle.current().catch((err) => logger.warn({ err: String(err) }, 'console bundle not built at start; the first request tries again'))
  const app = createServiceApp(platform, {
    service: 'webhooks',
    rawPath: (p) => p === '/hook' || p.startsWith('/hook/'),
    middleware: [captureMiddleware(platform), pages],
    routers: [harRouter(platform), endpointsRouter(platform), liveRouter(platform, hub), forwardingRouter(platform), inspectRouter(platform), accountKeyRouter(platform, 'webhooks'), consoleSessionRouter(platform, 'webhooks')],
  })
  return { app, close: async () => hub.close() }
}
