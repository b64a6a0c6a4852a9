// Settling quota holds a dead API process left (from the invoices-abandoned sweep): units taken
// for an invoice or a batch whose recording never finished. A batch recorded whole stays charged
// and is finished by its watcher; one that was not is removed and its units given back (a request
// still running when its hold is settled finds it gone at confirmHold and undoes its own writes,
// 503). A single invoice not recorded by then is recorded failed here, which gives its unit back
// and makes a late render's record fail (its _id is taken): so a render is never kept for free, and
// the hold is confirmed like any recorded invoice's (docs/architecture.md, "A single invoice,
// recorded once").
import type { Platform } from '../platform/platform.ts'
import { enqueueDurably } from '../platform/queue/outbox.ts'
import { isDuplicateKey } from '../platform/store/mongo.ts'
import { logger } from '../platform/logger.ts'
import { batches, rowCounts } from './batch/batch-store.ts'
import { invoiceBatchWatchContract } from './job-contracts.ts'
import { getInvoice, invoices, recordFailed, releaseIfFailed } from './store/invoice-store.ts'
import { RENDER_TIMEOUT_MESSAGE } from './await-invoice.ts'
import { cancelHold, confirmHold, staleHolds, type QuotaHold } from './store/quota-store.ts'

/** Is the batch the hold pays for recorded whole (then it stays charged)? */
async function batchRecordedWhole(platform: Platform, hold: QuotaHold): Promise<boolean> {
  const batch = await batches(platform.db).findOne({ _id: hold.id }, { projection: { total: 1 } })
  if (!batch) return false
  const c = await rowCounts(platform.db, hold.id)
  return c.queued + c.rendering + c.done + c.failed === batch.total
}

/**
 * Make sure a held single invoice is recorded: failed (its unit given back) unless its render was
 * recorded; a failed record whose writer died before giving the unit back gives it back now.
 */
async function recordAbandoned(platform: Platform, accountId: string, period: string, hold: QuotaHold): Promise<boolean> {
  const doc = await getInvoice(platform.db, hold.id)
  if (!doc) {
    const rec = { _id: hold.id, account_id: accountId, kind: 'single' as const, period, created_at: hold.at }
    if (!(await recordFailed(platform.db, rec, { status: 504, message: RENDER_TIMEOUT_MESSAGE }, platform.config.INVOICE_RETENTION_DAYS))) return false
    logger.warn({ accountId, hold: hold.id }, 'quota hold of an invoice that was never recorded: recorded failed, unit given back')
    return true
  }
  if (doc.status === 'failed') await releaseIfFailed(platform.db, hold.id)
  return false
}

/** A recorded batch's watcher may not have been enqueued before the process died: without it nothing finishes the batch. */
async function ensureWatcher(platform: Platform, batchId: string): Promise<void> {
  try {
    await enqueueDurably(platform, invoiceBatchWatchContract, { batch_id: batchId })
  } catch (err) {
    if (!isDuplicateKey(err)) throw err // already in the outbox
  }
}

/** Remove the part of a batch a dead process wrote. */
async function removePartial(platform: Platform, hold: QuotaHold): Promise<void> {
  await invoices(platform.db, hold.id).deleteMany({ batch_id: hold.id })
  await batches(platform.db).deleteOne({ _id: hold.id })
}

export async function settleStaleHolds(platform: Platform, cutoff: Date): Promise<{ confirmed: number; released: number }> {
  let confirmed = 0
  let released = 0
  for (const { accountId, period, hold } of await staleHolds(platform.db, cutoff)) {
    if (hold.kind === 'invoice') {
      if (await recordAbandoned(platform, accountId, period, hold)) released += hold.n
      if (await confirmHold(platform.db, accountId, period, hold.id)) confirmed++
      continue
    }
    if (await batchRecordedWhole(platform, hold)) {
      await ensureWatcher(platform, hold.id)
      if (await confirmHold(platform.db, accountId, period, hold.id)) confirmed++
      continue
    }
    // Give back first: only the side that takes the hold away (this, or the request's confirmHold)
    // acts, so a request that confirmed meanwhile keeps what it recorded.
    if (await cancelHold(platform.db, accountId, period, hold.id)) {
      await removePartial(platform, hold)
      released += hold.n
      logger.warn({ accountId, hold: hold.id, kind: hold.kind, units: hold.n }, 'quota hold of a request that never recorded its work: units given back')
    }
  }
  return { confirmed, released }
}
