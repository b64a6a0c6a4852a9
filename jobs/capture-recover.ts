// capture-recover: bulk recovery of an endpoint's dead-lettered forwards since a time
// (src/webhooks/forward/dead-letter-recovery.ts); progress is in the recovery document.
import { defineJob } from '../src/platform/queue/job.ts'
import { captureRecoverContract } from '../src/webhooks/job-contracts.ts'
import { runRecovery } from '../src/webhooks/forward/dead-letter-recovery.ts'

export const captureRecoverJob = defineJob(captureRecoverContract, {
  concurrency: 2,
  process: ({ recovery_id }, _job, platform) => runRecovery(platform, recovery_id),
})
