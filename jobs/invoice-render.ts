// invoice-render: renders one single or demo invoice into a PDF (batch rows: invoice-batch-render).
import { z } from 'zod'
import { defineJob } from '../src/platform/job.ts'
import { QueueName } from '../src/platform/queue-names.ts'
import { renderStoredInvoice } from '../src/invoice/render-invoice.ts'
import { invoiceBodySchema } from '../src/invoice/schema.ts'

export const invoiceRenderPayload = z.object({
  invoice_id: z.string().min(1).max(64),
  /**
   * The request as stored, when the producer has it at hand (single and demo invoices): the worker
   * then skips reading it back, a round trip on the latency path of POST /invoice. MongoDB stays
   * the source of truth for the invoice's state; a job without it reads it back.
   */
  request: invoiceBodySchema.optional(),
})
export type InvoiceRenderPayload = z.infer<typeof invoiceRenderPayload>

export const invoiceRenderJob = defineJob({
  queue: QueueName.InvoiceRender,
  schema: invoiceRenderPayload,
  options: { attempts: 3, backoff: { type: 'exponential', delay: 500 } },
  concurrency: 2,
  async process({ invoice_id, request }, job, platform) {
    const finalAttempt = job.attemptsMade + 1 >= (job.opts.attempts ?? 1)
    return renderStoredInvoice(platform, invoice_id, { finalAttempt, threads: platform.config.RENDER_CONCURRENCY, request })
  },
})
