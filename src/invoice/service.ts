// The invoice service as the CLI and tests see it.
import type { ServiceDef } from '../platform/service.ts'
import { invoiceRenderContract } from './job-contracts.ts'
import { createInvoiceApp } from './app.ts'

export const invoiceService: ServiceDef = {
  name: 'invoice',
  port: (c) => c.INVOICE_PORT,
  basePath: '/api/v1',
  createApp: createInvoiceApp,
  awaits: [invoiceRenderContract.queue],
}
