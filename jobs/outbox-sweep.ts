// outbox-sweep: every minute, re-enqueue work whose enqueue failed (e.g. Redis was down).
import { z } from 'zod'
import { defineJob } from '../src/platform/job.ts'
import { sweepOutbox } from '../src/platform/outbox.ts'
import { QueueName } from '../src/platform/queue-names.ts'

export const outboxSweepJob = defineJob({
  queue: QueueName.OutboxSweep,
  schema: z.object({ min_age_ms: z.number().int().min(0).optional() }),
  scheduler: { id: 'outbox-sweep', every: 60_000, payload: {} },
  async process({ min_age_ms }, _job, platform) {
    const { JOBS } = await import('./index.ts') // the list includes this job: import it late
    return { enqueued: await sweepOutbox(platform, JOBS, min_age_ms) }
  },
})
