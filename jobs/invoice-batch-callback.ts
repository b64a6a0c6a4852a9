// invoice-batch-callback: delivers a finished batch's signed completion webhook, with retries
// (the contract's schedule) and every attempt recorded on the batch.
import { defineJob, PermanentJobError } from '../src/platform/queue/job.ts'
import { getBatch, recordCallbackAttempt } from '../src/invoice/batch/batch-store.ts'
import { deliverCallback } from '../src/invoice/batch/batch-callback.ts'
import { invoiceBatchCallbackContract } from '../src/invoice/job-contracts.ts'

export const invoiceBatchCallbackJob = defineJob(invoiceBatchCallbackContract, {
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
