// The invoice service's Koa app (port 3001, base /api/v1).
import type Koa from 'koa'
import { createApp } from '../platform/http/app.ts'
import type { Platform } from '../platform/platform.ts'
import { invoiceRouter } from './routes.ts'
import { billingRouter } from '../platform/billing/routes.ts'
import { BATCH_PATH } from './batch-routes.ts'

export function createInvoiceApp(platform: Platform): Koa {
  // 1,000 line items of long text fit comfortably in 10 MB. Batches also come as NDJSON and
  // have their own cap: their body is read in batch-body.ts.
  const app = createApp({ service: 'invoice', jsonLimit: '10mb', trustProxy: platform.config.TRUST_PROXY, rawPath: (p) => p === BATCH_PATH })
  const router = invoiceRouter(platform)
  app.use(router.routes()).use(router.allowedMethods())
  const billing = billingRouter(platform, 'invoice')
  app.use(billing.routes()).use(billing.allowedMethods())
  return app
}
