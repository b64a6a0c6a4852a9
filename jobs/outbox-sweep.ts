// outbox-sweep: every 10 s, re-enqueue work whose enqueue failed (Redis down, or behind Sentinel a
// job no replica acknowledged). The outbox is small and the look is one indexed query. It finds
// each entry's contract in the registry of every job contract (src/job-contracts.ts).
import { JOB_CONTRACTS } from '../src/job-contracts.ts'
import { defineJob } from '../src/platform/queue/job.ts'
import { outboxSweepContract, sweepOutbox } from '../src/platform/queue/outbox.ts'

export const outboxSweepJob = defineJob(outboxSweepContract, {
  scheduler: { id: 'outbox-sweep', every: 10_000, payload: {} },
  async process({ min_age_ms }, _job, platform) {
    return { enqueued: await sweepOutbox(platform, JOB_CONTRACTS, min_age_ms) }
  },
})
