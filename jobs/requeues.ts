// What a worker re-enqueues from MongoDB when Redis comes back without its data
// (src/platform/queue/self-heal.ts): each domain's accepted, unfinished work, and the outbox.
import type { Requeue } from '../src/platform/queue/self-heal.ts'
import { sweepOutbox } from '../src/platform/queue/outbox.ts'
import { JOB_CONTRACTS } from '../src/job-contracts.ts'
import { requeueBatches } from '../src/invoice/batch/batch-requeue.ts'
import { requeueForwards } from '../src/webhooks/forward/forward-requeue.ts'

export const REQUEUES: Requeue[] = [
  { name: 'outbox', run: (p) => sweepOutbox(p, JOB_CONTRACTS, 0) },
  { name: 'invoice batches', run: requeueBatches },
  { name: 'capture forwards', run: requeueForwards },
]
