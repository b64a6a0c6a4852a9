// What a worker re-enqueues from MongoDB when Redis comes back without its data
// (src/platform/self-heal.ts): each domain's accepted, unfinished work, and the outbox.
import type { Recovery } from '../src/platform/self-heal.ts'
import { sweepOutbox } from '../src/platform/outbox.ts'
import { JOB_CONTRACTS } from '../src/job-contracts.ts'
import { recoverBatches } from '../src/invoice/batch-recovery.ts'
import { recoverForwards } from '../src/webhooks/forward-recovery.ts'

export const RECOVERIES: Recovery[] = [
  { name: 'outbox', run: (p) => sweepOutbox(p, JOB_CONTRACTS, 0) },
  { name: 'invoice batches', run: recoverBatches },
  { name: 'capture forwards', run: recoverForwards },
]
