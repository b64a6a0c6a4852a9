// usage-reset: at 00:00 UTC on the 1st, rolls monthly counters. Counters are keyed by month, so
// a new month starts at 0 by itself; this job only prunes counters older than a year. Idempotent.
import { clock, monthKey } from '../src/platform/clock.ts'
import { defineJob } from '../src/platform/queue/job.ts'
import { usageResetContract } from '../src/invoice/job-contracts.ts'
import { pruneBefore } from '../src/invoice/store/quota-store.ts'

export const usageResetJob = defineJob(usageResetContract, {
  scheduler: { id: 'usage-reset-monthly', pattern: '0 0 1 * *', payload: {} },
  async process(_payload, _job, platform) {
    const now = clock.now()
    const keepFrom = monthKey(new Date(Date.UTC(now.getUTCFullYear() - 1, now.getUTCMonth(), 1)))
    return { pruned: await pruneBefore(platform.db, keepFrom), keepFrom }
  },
})
