// The webhook-capture service's Koa app (port 3003): capture under /hook/ (raw bodies, parsed by
// the capture itself), the management API under /api/v1 (with the shared checkout), the
// inspection page under /inspect/.
import type Koa from 'koa'
import { billingRouter } from '../platform/billing/routes.ts'
import { createApp } from '../platform/http/app.ts'
import type { Platform } from '../platform/platform.ts'
import { captureMiddleware } from './capture.ts'
import { inspectRouter } from './inspect.ts'
import { webhooksRouter } from './routes.ts'

export function createWebhooksApp(platform: Platform): Koa {
  const app = createApp({
    service: 'webhooks',
    rawPath: (p) => p === '/hook' || p.startsWith('/hook/'),
    trustProxy: platform.config.TRUST_PROXY,
  })
  app.use(captureMiddleware(platform))
  for (const router of [webhooksRouter(platform), billingRouter(platform, 'webhooks'), inspectRouter(platform)]) app.use(router.routes()).use(router.allowedMethods())
  return app
}
