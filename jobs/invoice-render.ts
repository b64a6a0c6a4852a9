// invoice-render: renders one single or demo invoice into a PDF (batch rows: invoice-batch-render).
import { defineJob } from '../src/platform/queue/job.ts'
import { invoiceRenderContract } from '../src/invoice/job-contracts.ts'
import { renderAndRecord, renderStoredInvoice } from '../src/invoice/pdf/job-render-invoice.ts'
import { warmRenderPool } from '../src/invoice/pdf/pool-render-threads.ts'

export const invoiceRenderJob = defineJob(invoiceRenderContract, {
  concurrency: 2,
  async process({ invoice_id, request, record }, job, platform) {
    const finalAttempt = job.attemptsMade + 1 >= (job.opts.attempts ?? 1)
    const threads = platform.config.RENDER_CONCURRENCY
    if (record && request) return renderAndRecord(platform, job, { _id: invoice_id, ...record, created_at: new Date(record.created_at), request }, { finalAttempt, threads })
    return renderStoredInvoice(platform, invoice_id, { finalAttempt, threads, request })
  },
  warmUp: (platform) => warmRenderPool(platform.config.RENDER_CONCURRENCY),
})
