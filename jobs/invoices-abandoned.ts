// invoices-abandoned: every 30 s, settles the quota holds a dead API process left (quota-holds.ts):
// a single invoice that nothing recorded RENDER_TIMEOUT_MS plus two job locks after its hold (a
// render in progress would have finished or been taken over by then) is recorded failed, which
// gives its unit back and keeps a later render from being recorded; a batch not recorded whole is
// removed and its units come back; recorded work stays charged. It also fails single and demo
// invoices an earlier version stored before their render and that are still open after that time.
// Idempotent.
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
