// flag-history-sweep: every minute, settles audit entries whose request died mid-change,
// re-dispatches changes whose dispatch was lost, and applies the plans' history retention
// (src/flags/changes/history-sweep.ts). Idempotent; time comes from the injectable clock.
import { defineJob } from '../src/platform/queue/job.ts'
import { sweepHistory } from '../src/flags/changes/history-sweep.ts'
import { flagHistorySweepContract } from '../src/flags/job-contracts.ts'

export const flagHistorySweepJob = defineJob(flagHistorySweepContract, {
  scheduler: { id: 'flag-history-sweep', every: 60_000, payload: {} },
  async process({ min_age_ms }, _job, platform) {
    return sweepHistory(platform, min_age_ms)
  },
})
