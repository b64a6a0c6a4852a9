// invoice-batch-watch: one per batch, created with it (through the outbox). Looks at the batch
// every half second until every row is done or failed, then finishes it and sends the callback.
// Between looks the job waits as a delayed job, so watching holds no worker slot.
import { DelayedError } from 'bullmq'
import { defineJob } from '../src/platform/queue/job.ts'
import { advanceBatch } from '../src/invoice/batch/batch-progress.ts'
import { BATCH_WATCH_INTERVAL_MS, invoiceBatchWatchContract } from '../src/invoice/job-contracts.ts'

export const invoiceBatchWatchJob = defineJob(invoiceBatchWatchContract, {
  concurrency: 20,
  async process({ batch_id }, job, platform) {
    const progress = await advanceBatch(platform, batch_id, { repair: true })
    if (progress.state !== 'processing') return progress
    // BullMQ schedules by wall time, not by the business clock.
    await job.moveToDelayed(Date.now() + BATCH_WATCH_INTERVAL_MS, job.token)
    throw new DelayedError()
  },
})
