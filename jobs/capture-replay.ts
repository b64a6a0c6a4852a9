// capture-replay: sends one stored request to the URL a caller chose; the ingress waits for it.
import { defineJob } from '../src/platform/queue/job.ts'
import { captureReplayContract } from '../src/webhooks/job-contracts.ts'
import { runReplay } from '../src/webhooks/replay/replay-run.ts'

export const captureReplayJob = defineJob(captureReplayContract, {
  concurrency: 10,
  async process({ replay_id }, _job, platform) {
    return runReplay(platform, replay_id)
  },
})
