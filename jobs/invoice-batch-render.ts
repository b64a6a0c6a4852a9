// invoice-batch-render: renders one chunk of a batch's rows (BATCH_CHUNK_ROWS consecutive rows).
// A queue of its own, so single invoices (invoice-render) always have worker slots of their own
// and never wait behind a batch; both share the process's render threads.
import { z } from 'zod'
import { defineJob } from '../src/platform/job.ts'
import { QueueName } from '../src/platform/queue-names.ts'
import { renderBatchChunk } from '../src/invoice/render-batch-chunk.ts'

/**
 * Rows per job. Larger chunks mean fewer writes per row (four per chunk) but coarser progress and
 * more work redone after a worker dies mid-chunk; 20 rows is about 0.2 s of rendering.
 */
export const BATCH_CHUNK_ROWS = 20

export const invoiceBatchRenderPayload = z
  .object({
    batch_id: z.string().min(1).max(64),
    from: z.number().int().min(0),
    to: z.number().int().min(1),
  })
  .refine((c) => c.to > c.from, 'to must be greater than from')
export type InvoiceBatchRenderPayload = z.infer<typeof invoiceBatchRenderPayload>

/** A chunk's job id: stable, so enqueueing a chunk twice adds it once. */
export const chunkJobId = (batchId: string, from: number) => `${batchId}-${from}`

export const invoiceBatchRenderJob = defineJob({
  queue: QueueName.InvoiceBatchRender,
  schema: invoiceBatchRenderPayload,
  options: { attempts: 3, backoff: { type: 'exponential', delay: 500 } },
  // One chunk per render thread keeps every thread busy, plus one to render while another chunk stores.
  concurrency: (config) => config.RENDER_CONCURRENCY + 1,
  async process(chunk, job, platform) {
    const finalAttempt = job.attemptsMade + 1 >= (job.opts.attempts ?? 1)
    return renderBatchChunk(platform, chunk, { jobId: job.id!, finalAttempt, threads: platform.config.RENDER_CONCURRENCY })
  },
})
