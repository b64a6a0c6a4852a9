// invoice-batch-callback: delivers a finished batch's signed completion webhook, with retries
// (exponential from 2 s over 8 attempts, ≈ 4 minutes) and every attempt recorded on the batch.
import { z } from 'zod'
import { defineJob, PermanentJobError } from '../src/platform/job.ts'
import { QueueName } from '../src/platform/queue-names.ts'
import { getBatch, recordCallbackAttempt } from '../src/invoice/batch-store.ts'
import { deliverCallback } from '../src/invoice/callback.ts'

export const invoiceBatchCallbackPayload = z.object({ batch_id: z.string().min(1).max(64) })

export const invoiceBatchCallbackJob = defineJob({
  queue: QueueName.InvoiceBatchCallback,
  schema: invoiceBatchCallbackPayload,
  options: { attempts: 8, backoff: { type: 'exponential', delay: 2_000 } },
  concurrency: 10,
  async process({ batch_id }, job, platform) {
    const batch = await getBatch(platform.db, batch_id)
    if (!batch?.callback || batch.status !== 'finished') return { state: 'skipped' }
    if (batch.callback.state !== 'pending') return { state: batch.callback.state }
    const out = await deliverCallback(platform, batch)
    if (out.ok) {
      await recordCallbackAttempt(platform.db, batch_id, { state: 'delivered', status: out.status })
      return { state: 'delivered', status: out.status }
    }
    const last = out.permanent || job.attemptsMade + 1 >= (job.opts.attempts ?? 1)
    await recordCallbackAttempt(platform.db, batch_id, { state: last ? 'failed' : 'pending', status: out.status, error: out.error })
    if (out.permanent) throw new PermanentJobError(out.error)
    throw new Error(out.error)
  },
})
