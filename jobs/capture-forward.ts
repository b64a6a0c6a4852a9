// capture-forward: one delivery attempt of a captured request to its endpoint's forward URL.
// A failed attempt schedules the next one as a delayed job with its own id; after the last (or a
// request that can never be sent), the delivery is dead-lettered. Its lock lasts as long as the
// attempt's claim (forward-claim.ts): a worker starved of CPU for seconds keeps its jobs (measured
// loop stalls reached 13.8 s at load ~40, past the 4 s an 8 s lock survives), and a dead worker's
// forward is sent again after the lease either way.
import { defineJob } from '../src/platform/queue/job.ts'
import { continueSchedule, forwardAttempt } from '../src/webhooks/forward/forward.ts'
import { forwardLeaseMs } from '../src/webhooks/forward/forward-claim.ts'
import { captureForwardContract } from '../src/webhooks/job-contracts.ts'

export const captureForwardJob = defineJob(captureForwardContract, {
  concurrency: 20,
  lockMs: forwardLeaseMs,
  async process(ref, _job, platform) {
    return continueSchedule(platform, ref, await forwardAttempt(platform, ref))
  },
})
