// The feature-flag service's Koa app (port 3002; paths include /api/v1 and /ofrep/v1). Each app
// owns one flag cache (with its own Redis subscriber) and rate-limit connection, closed when its
// HTTP server closes.
import type Koa from 'koa'
import { billingRouter } from '../platform/billing/routes.ts'
import { createApp } from '../platform/http/app.ts'
import { managementCors } from '../platform/http/management-cors.ts'
import { logger } from '../platform/logger.ts'
import type { Platform } from '../platform/platform.ts'
import { evaluateHotRoute } from './evaluate-fast-path.ts'
import { evaluateRouter } from './evaluate-routes.ts'
import { evaluationCors, isEvaluationPath } from './evaluation-cors.ts'
import { FlagCache } from './flag-cache.ts'
import { ofrepRouter } from './ofrep-routes.ts'
import { flagsRouter } from './routes.ts'
import { evaluationGate } from './sdk-auth.ts'

export function createFlagsApp(platform: Platform): Koa {
  const cache = new FlagCache(platform)
  const gate = evaluationGate(platform, cache)
  const app = createApp({
    service: 'flags',
    jsonLimit: '1mb',
    trustProxy: platform.config.TRUST_PROXY,
    // OFREP reads its own body so that malformed JSON gets the protocol's PARSE_ERROR answer.
    rawPath: (path) => path.startsWith('/ofrep/'),
    hotRoutes: [evaluateHotRoute(cache, gate)],
    // Browsers: the evaluation API per project (any origin by default), the rest only for the
    // operator's listed front-ends (CORS_MANAGEMENT_ORIGINS; none by default).
    beforeBody: [evaluationCors(), managementCors(platform.config.CORS_MANAGEMENT_ORIGINS, { skip: isEvaluationPath })],
  })
  cache.start().catch((err) => logger.error({ err: String(err) }, 'flags cache subscriber failed to start'))

  for (const router of [flagsRouter(platform, cache), evaluateRouter(cache, gate), ofrepRouter(cache, gate.admit), billingRouter(platform, 'flags')]) {
    app.use(router.routes()).use(router.allowedMethods())
  }

  // The cache's subscriber and timer live as long as the server that serves the app.
  const listen = app.listen.bind(app) as (...args: unknown[]) => ReturnType<Koa['listen']>
  app.listen = ((...args: unknown[]) => {
    const server = listen(...args)
    server.once('close', () => {
      gate.close()
      void cache.close()
    })
    return server
  }) as Koa['listen']
  return app
}
