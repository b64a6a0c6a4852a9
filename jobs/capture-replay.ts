// capture-replay: sends one stored request to the URL a caller chose; the ingress waits for it.
// No retries: the caller is waiting and sees the outcome (a replay is repeated by asking again).
import { z } from 'zod'
import { defineJob } from '../src/platform/job.ts'
import { QueueName } from '../src/platform/queue-names.ts'
import { runReplay } from '../src/webhooks/replay-run.ts'

export const captureReplayPayload = z.object({ replay_id: z.string().min(1).max(64) })
export type CaptureReplayPayload = z.infer<typeof captureReplayPayload>

export const captureReplayJob = defineJob({
  queue: QueueName.CaptureReplay,
  schema: captureReplayPayload,
  options: { attempts: 1 },
  concurrency: 10,
  async process({ replay_id }, _job, platform) {
    return runReplay(platform, replay_id)
  },
})
