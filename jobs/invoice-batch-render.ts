// invoice-batch-render: renders one chunk of a batch's rows. Single invoices (invoice-render) have
// worker slots of their own; both share the process's render threads.
import { defineJob } from '../src/platform/queue/job.ts'
import { invoiceBatchRenderContract } from '../src/invoice/job-contracts.ts'
import { renderBatchChunk } from '../src/invoice/batch/render-batch-chunk.ts'

export const invoiceBatchRenderJob = defineJob(invoiceBatchRenderContract, {
  // One chunk per render thread keeps every thread busy, plus one to render while another chunk stores.
  concurrency: (config) => config.RENDER_CONCURRENCY + 1,
  async process(chunk, job, platform) {
    const finalAttempt = job.attemptsMade + 1 >= (job.opts.attempts ?? 1)
    return renderBatchChunk(platform, chunk, { jobId: job.id!, finalAttempt, threads: platform.config.RENDER_CONCURRENCY })
  },
})
