// captures-expire: every 5 minutes, deletes captures past retention and expired endpoints with
// their captures (src/webhooks/expire.ts). Idempotent; time comes from the injectable clock.
import { z } from 'zod'
import { clock } from '../src/platform/clock.ts'
import { defineJob } from '../src/platform/job.ts'
import { QueueName } from '../src/platform/queue-names.ts'
import { expireCaptures } from '../src/webhooks/expire.ts'

export const capturesExpireJob = defineJob({
  queue: QueueName.CapturesExpire,
  schema: z.object({ batch: z.number().int().min(1).max(5_000).optional() }),
  scheduler: { id: 'captures-expire', every: 5 * 60_000, payload: {} },
  async process({ batch }, _job, platform) {
    return expireCaptures(platform.db, clock.now(), batch)
  },
})
