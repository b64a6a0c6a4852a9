// Monthly invoice quota: one counter document per account and UTC calendar month, reserved
// atomically before rendering and released when a render fails. Reads of a new month find no
// document and show 0, so nothing depends on the reset job running on time.
// A reservation is first a hold, kept in the counter document itself (`holds`), until the
// invoice or batch it pays for is recorded: a process killed between the two would otherwise
// leave units charged for nothing. Taking units and recording the hold is one atomic update, and
// so are confirming it and giving it back, so each unit is charged or returned exactly once
// (quota-holds.ts settles the holds a dead process left).
import type { Db, UpdateFilter } from 'mongodb'
import { clock } from '../../platform/clock.ts'
import { isDuplicateKey, type IndexSpec } from '../../platform/store/mongo.ts'

/** Units taken for an invoice or a batch not recorded yet. */
export interface QuotaHold {
  /** The id of the invoice or batch the units pay for. */
  id: string
  kind: 'invoice' | 'batch'
  n: number
  at: Date
}

export interface UsageDoc {
  _id: string
  account_id: string
  period: string
  count: number
  /**
   * Open holds by id (a map, not an array: the embedded engine has no $push/$pull), and how many
   * there are, so the sweep finds the counters that have any through an index.
   */
  holds?: Record<string, Omit<QuotaHold, 'id'>>
  holds_n?: number
}

export const usageIndexes: IndexSpec = {
  collection: 'invoice_usage',
  indexes: [
    { key: { period: 1 }, name: 'period' },
    { key: { holds_n: 1 }, name: 'holds_n', sparse: true },
  ],
  // A few counters per account: the engine scans them as fast without it.
  notOnEngine: ['holds_n'],
}

const usage = (db: Db) => db.collection<UsageDoc>('invoice_usage')
const idOf = (accountId: string, period: string) => `${accountId}:${period}`

async function ensureCounter(db: Db, accountId: string, period: string): Promise<void> {
  try {
    await usage(db).updateOne(
      { _id: idOf(accountId, period) },
      { $setOnInsert: { account_id: accountId, period, count: 0 } },
      { upsert: true },
    )
  } catch (err) {
    if (!isDuplicateKey(err)) throw err // a concurrent upsert created it
  }
}

/**
 * Reserve `n` units if they fit under `limit`; all or nothing. With `hold`, the units stay a hold
 * until confirmHold (or cancelHold) names it.
 */
export async function reserve(
  db: Db,
  accountId: string,
  period: string,
  limit: number,
  n = 1,
  hold?: { id: string; kind: QuotaHold['kind'] },
): Promise<boolean> {
  const take = () => usage(db).updateOne({ _id: idOf(accountId, period), count: { $lte: limit - n } }, takeUnits(n, hold))
  // The counter usually exists: one round trip. Only the month's first request creates it.
  if ((await take()).modifiedCount === 1) return true
  await ensureCounter(db, accountId, period)
  return (await take()).modifiedCount === 1
}

/** The update that takes `n` units, as a hold when named, and confirms the holds in `confirm`. */
function takeUnits(n: number, hold?: { id: string; kind: QuotaHold['kind'] }, confirm: string[] = []): UpdateFilter<UsageDoc> {
  if (!hold) return { $inc: { count: n } }
  return {
    $inc: { count: n, holds_n: 1 - confirm.length },
    $set: { [`holds.${hold.id}`]: { kind: hold.kind, n, at: clock.now() } },
    ...(confirm.length ? { $unset: unsetHolds(confirm) } : {}),
  }
}

/**
 * reserve() of one unit that also confirms `confirm`, holds of the same counter whose work is
 * recorded, in the same update (hold-confirmations.ts). Each of them must still be held, so
 * holds_n stays exact; if one is not, or the unit does not fit, the plain reservation is tried and
 * nothing is confirmed.
 */
export async function reserveConfirming(
  db: Db,
  accountId: string,
  period: string,
  limit: number,
  hold: { id: string; kind: QuotaHold['kind'] },
  confirm: string[],
): Promise<{ reserved: boolean; confirmed: boolean }> {
  confirm = distinct(confirm)
  if (confirm.length) {
    const r = await usage(db).updateOne({ _id: idOf(accountId, period), count: { $lte: limit - 1 }, ...stillHeld(confirm) }, takeUnits(1, hold, confirm))
    if (r.modifiedCount === 1) return { reserved: true, confirmed: true }
  }
  return { reserved: await reserve(db, accountId, period, limit, 1, hold), confirmed: false }
}

// holds_n moves by the number of ids: an id given twice must count once, as the $unset does.
const distinct = (ids: string[]) => (ids.length < 2 ? ids : [...new Set(ids)])
const stillHeld = (ids: string[]) => Object.fromEntries(ids.map((id) => [`holds.${id}`, { $exists: true }]))
const unsetHolds = (ids: string[]): Record<string, ''> => Object.fromEntries(ids.map((id) => [`holds.${id}`, '' as const]))

/** The holds' invoices or batches are recorded: their units stay charged. All of them, or none (false: one was given back or confirmed already). */
export async function confirmHolds(db: Db, accountId: string, period: string, holdIds: string[]): Promise<boolean> {
  holdIds = distinct(holdIds)
  const r = await usage(db).updateOne({ _id: idOf(accountId, period), ...stillHeld(holdIds) }, { $unset: unsetHolds(holdIds), $inc: { holds_n: -holdIds.length } })
  return r.modifiedCount === 1
}

/** One hold's work is recorded: its units stay charged. False if it was given back. */
export const confirmHold = (db: Db, accountId: string, period: string, holdId: string): Promise<boolean> => confirmHolds(db, accountId, period, [holdId])

export async function release(db: Db, accountId: string, period: string, n = 1): Promise<void> {
  await usage(db).updateOne({ _id: idOf(accountId, period), count: { $gte: n } }, { $inc: { count: -n } })
}

/** Give a hold's units back, if it is still held (never twice, never after confirmHold). */
export async function cancelHold(db: Db, accountId: string, period: string, holdId: string): Promise<boolean> {
  const doc = await usage(db).findOne({ _id: idOf(accountId, period) })
  const hold = doc?.holds?.[holdId]
  if (!hold) return false
  const r = await usage(db).updateOne(
    { _id: idOf(accountId, period), [`holds.${holdId}.n`]: hold.n },
    { $unset: unsetHolds([holdId]), $inc: { count: -hold.n, holds_n: -1 } },
  )
  return r.modifiedCount === 1
}

/** Holds taken before `cutoff`, with the counter they are in. */
export async function staleHolds(db: Db, cutoff: Date): Promise<{ accountId: string; period: string; hold: QuotaHold }[]> {
  const docs = await usage(db).find({ holds_n: { $gt: 0 } }).toArray()
  return docs.flatMap((d) =>
    Object.entries(d.holds ?? {})
      .filter(([, h]) => h.at < cutoff)
      .map(([id, h]) => ({ accountId: d.account_id, period: d.period, hold: { id, ...h } })),
  )
}

export async function used(db: Db, accountId: string, period: string): Promise<number> {
  const doc = await usage(db).findOne({ _id: idOf(accountId, period) })
  return doc?.count ?? 0
}

/** Drop counters of months before `keepFrom` (history beyond a year is not needed). */
export async function pruneBefore(db: Db, keepFrom: string): Promise<number> {
  const r = await usage(db).deleteMany({ period: { $lt: keepFrom } })
  return r.deletedCount
}
