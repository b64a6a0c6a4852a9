// capture-forward-resume: after forwarding of an endpoint resumes, sends its held requests one
// at a time in capture order (src/webhooks/forward/forward-pause.ts).
import { defineJob } from '../src/platform/queue/job.ts'
import { sendPaused } from '../src/webhooks/forward/forward-pause.ts'
import { captureForwardResumeContract } from '../src/webhooks/job-contracts.ts'

export const captureForwardResumeJob = defineJob(captureForwardResumeContract, {
  concurrency: 5,
  process: ({ endpoint_id }, _job, platform) => sendPaused(platform, endpoint_id),
})
