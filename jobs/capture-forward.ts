// capture-forward: one delivery attempt of a captured request to its endpoint's forward URL.
// A failed attempt schedules the next one as a delayed job with its own id; after the last (or a
// request that can never be sent), the delivery is dead-lettered.
import { defineJob } from '../src/platform/job.ts'
import { continueSchedule, forwardAttempt } from '../src/webhooks/forward.ts'
import { captureForwardContract } from '../src/webhooks/job-contracts.ts'

export const captureForwardJob = defineJob(captureForwardContract, {
  concurrency: 20,
  async process(ref, _job, platform) {
    return continueSchedule(platform, ref, await forwardAttempt(platform, ref))
  },
})
