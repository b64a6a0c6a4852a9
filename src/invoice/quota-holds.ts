// Settling quota holds a dead API process left (from the invoices-abandoned sweep): units taken
// for an invoice or a batch whose recording never finished. What was recorded stays charged, and
// is then finished by the usual means (the abandoned sweep for a single invoice, the watcher for a
// batch); what was not is removed and its units given back. A request still running when its
// hold is settled finds it gone at confirmHold and undoes its own writes (503), so a slow request
// racing the sweep is never charged twice nor rendered for free.
import type { Platform } from '../platform/platform.ts'
import { enqueueDurably } from '../platform/queue/outbox.ts'
import { isDuplicateKey } from '../platform/store/mongo.ts'
import { logger } from '../platform/logger.ts'
import { batches, rowCounts } from './batch/batch-store.ts'
import { invoiceBatchWatchContract } from './job-contracts.ts'
import { getInvoice, invoices } from './store/invoice-store.ts'
import { cancelHold, confirmHold, staleHolds, type QuotaHold } from './store/quota-store.ts'

/** Is what the hold pays for recorded whole (then it stays charged)? */
async function recorded(platform: Platform, hold: QuotaHold): Promise<boolean> {
  if (hold.kind === 'invoice') return (await getInvoice(platform.db, hold.id)) !== null
  const batch = await batches(platform.db).findOne({ _id: hold.id }, { projection: { total: 1 } })
  if (!batch) return false
  const c = await rowCounts(platform.db, hold.id)
  return c.queued + c.rendering + c.done + c.failed === batch.total
}

/** A recorded batch's watcher may not have been enqueued before the process died: without it nothing finishes the batch. */
async function ensureWatcher(platform: Platform, batchId: string): Promise<void> {
  try {
    await enqueueDurably(platform, invoiceBatchWatchContract, { batch_id: batchId })
  } catch (err) {
    if (!isDuplicateKey(err)) throw err // already in the outbox
  }
}

/** Remove the part of a batch a dead process wrote; a lone invoice has nothing to remove. */
async function removePartial(platform: Platform, hold: QuotaHold): Promise<void> {
  if (hold.kind !== 'batch') return
  await invoices(platform.db, hold.id).deleteMany({ batch_id: hold.id })
  await batches(platform.db).deleteOne({ _id: hold.id })
}

export async function settleStaleHolds(platform: Platform, cutoff: Date): Promise<{ confirmed: number; released: number }> {
  let confirmed = 0
  let released = 0
  for (const { accountId, period, hold } of await staleHolds(platform.db, cutoff)) {
    if (await recorded(platform, hold)) {
      if (hold.kind === 'batch') await ensureWatcher(platform, hold.id)
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
