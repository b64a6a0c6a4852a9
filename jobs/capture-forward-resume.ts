// capture-forward-resume: after forwarding of an endpoint resumes, sends its held requests one
// at a time in capture order (src/webhooks/forward-pause.ts).
import { defineJob } from '../src/platform/job.ts'
import { sendHeld } from '../src/webhooks/forward-pause.ts'
import { captureForwardResumeContract } from '../src/webhooks/job-contracts.ts'

export const captureForwardResumeJob = defineJob(captureForwardResumeContract, {
  concurrency: 5,
  process: ({ endpoint_id }, _job, platform) => sendHeld(platform, endpoint_id),
})
