// captures-expire: every 5 minutes, deletes captures past retention and expired endpoints with
// their captures (src/webhooks/store/expire.ts). Idempotent; time comes from the injectable clock.
import { clock } from '../src/platform/clock.ts'
import { defineJob } from '../src/platform/queue/job.ts'
import { expireCaptures } from '../src/webhooks/store/expire.ts'
import { capturesExpireContract } from '../src/webhooks/job-contracts.ts'

export const capturesExpireJob = defineJob(capturesExpireContract, {
  scheduler: { id: 'captures-expire', every: 5 * 60_000, payload: {} },
  async process({ batch }, _job, platform) {
    return expireCaptures(platform.db, clock.now(), batch)
  },
})
