// invoices-abandoned: every 30 s, fails single and demo invoices still open long after any waiting
// request gave up (RENDER_TIMEOUT_MS plus two job locks: a render in progress would have finished
// or been taken over by then). Their API process died while waiting, so nothing else would
// release their quota unit. A render that still comes later is not stored (markDone needs an open
// invoice). Idempotent.
// It also settles the quota holds such a process left (quota-holds.ts): units taken for an
// invoice or batch whose recording it never finished come back; what it recorded stays charged.
import { clock } from '../src/platform/clock.ts'
import { defineJob } from '../src/platform/queue/job.ts'
import { RENDER_TIMEOUT_MESSAGE } from '../src/invoice/await-invoice.ts'
import { invoicesAbandonedContract } from '../src/invoice/job-contracts.ts'
import { failAbandoned } from '../src/invoice/store/invoice-store.ts'
import { settleStaleHolds } from '../src/invoice/quota-holds.ts'

export const invoicesAbandonedJob = defineJob(invoicesAbandonedContract, {
  scheduler: { id: 'invoices-abandoned', every: 30_000, payload: {} },
  async process(_payload, _job, platform) {
    const cutoff = new Date(clock.nowMs() - platform.config.RENDER_TIMEOUT_MS - 2 * platform.config.JOB_LOCK_MS)
    const holds = await settleStaleHolds(platform, cutoff)
    return { failed: await failAbandoned(platform.db, cutoff, { status: 504, message: RENDER_TIMEOUT_MESSAGE }), holds }
  },
})
