// The invoice service's Koa app (port 3001, base /api/v1; its web console at / and the deep links below).
import { logger } from '../platform/logger.ts'
import { consolePages } from '../platform/http/console-pages.ts'
import { createServiceApp } from '../platform/service-app.ts'
import type { Platform } from '../platform/platform.ts'
import type { ServiceApp } from '../platform/service.ts'
import { accountKeyRouter } from '../platform/account-key-routes.ts'
import { consoleSessionRouter } from '../platform/http/console-session-routes.ts'
import { BATCH_PATH, batchRouter } from './batch-routes.ts'
import { invoiceListRouter } from './invoice-list-routes.ts'
import { invoiceRouter } from './invoice-routes.ts'
import { READ_PATH, receiveRouter } from './receive-routes.ts'
import { closeHoldConfirmations } from './store/hold-confirmations.ts'

/** The console's deep links (src/console/invoice/app.tsx); the API is under /api/v1, so none collides with it. */
export const CONSOLE_PATHS = ['/invoices', '/batches', '/account', '/sign-in', '/demo', '/read']

export function createInvoiceApp(platform: Platform): ServiceApp {
  // The preview is a PDF shown in a frame of a blob: URL the page makes: the only frame it allows.
  const pages = consolePages({ name: 'invoice', title: 'Invoices · queueworks', paths: CONSOLE_PATHS, blobFrames: true })
  pages.bundle.current().catch((err) => logger.warn({ err: String(err) }, 'console bundle not built at start; the first request tries again'))
  // The bulk API first: its GET /invoices/batch would otherwise be GET /invoices/{id} of an invoice "batch".
  // 1,000 line items of long text fit comfortably in 10 MB. Batches also come as NDJSON and
  // have their own cap: their body is read in batch-body.ts.
  return {
    app: createServiceApp(platform, { service: 'invoice', jsonLimit: '10mb', middleware: [pages], rawPath: (p) => p === BATCH_PATH || p === READ_PATH, routers: [batchRouter(platform), invoiceListRouter(platform), invoiceRouter(platform), receiveRouter(platform), accountKeyRouter(platform, 'invoice'), consoleSessionRouter(platform, 'invoice')] }),
    // Quota holds of recorded invoices still to confirm (hold-confirmations.ts).
    close: () => closeHoldConfirmations(platform),
  }
}
