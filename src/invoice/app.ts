// The invoice service's Koa app (port 3001, base /api/v1).
import type Koa from 'koa'
import { createApp } from '../platform/http/app.ts'
import type { Platform } from '../platform/platform.ts'
import { invoiceRouter } from './routes.ts'

export function createInvoiceApp(platform: Platform): Koa {
  // 1,000 line items of long text fit comfortably in 10 MB.
  const app = createApp({ service: 'invoice', jsonLimit: '10mb', trustProxy: platform.config.TRUST_PROXY })
  const router = invoiceRouter(platform)
  app.use(router.routes()).use(router.allowedMethods())
  return app
}
