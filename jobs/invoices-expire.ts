// invoices-expire: hourly, removes stored invoices past retention (INVOICE_RETENTION_DAYS after
// creation; demo invoices at their own expires_at), batches past the same retention, and expired
// Idempotency-Keys. Retention is applied when the job runs, so changing it applies to invoices
// already stored. Idempotent.
import { clock } from '../src/platform/clock.ts'
import { defineJob } from '../src/platform/queue/job.ts'
import { deleteBatchesBefore } from '../src/invoice/batch/batch-store.ts'
import { deleteExpiredKeys } from '../src/invoice/idempotency.ts'
import { deleteExpiredInvoices } from '../src/invoice/store/invoice-store.ts'
import { invoicesExpireContract } from '../src/invoice/job-contracts.ts'

export const invoicesExpireJob = defineJob(invoicesExpireContract, {
  scheduler: { id: 'invoices-expire-hourly', every: 3_600_000, payload: {} },
  async process(_payload, _job, platform) {
    const now = clock.now()
    const cutoff = new Date(now.getTime() - platform.config.INVOICE_RETENTION_DAYS * 86_400_000)
    const invoices = await deleteExpiredInvoices(platform.db, now, cutoff)
    const batches = await deleteBatchesBefore(platform.db, cutoff)
    const keys = await deleteExpiredKeys(platform.db, now)
    return { invoices, batches, idempotency_keys: keys, cutoff: cutoff.toISOString() }
  },
})
