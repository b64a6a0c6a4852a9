// Monthly invoice quota: one counter document per account and UTC calendar month, reserved
// atomically before rendering and released when a render fails. Reads of a new month find no
// document and show 0, so nothing depends on the reset job running on time.
import type { Db } from 'mongodb'
import { isDuplicateKey, type IndexSpec } from '../../platform/mongo.ts'

export interface UsageDoc {
  _id: string
  account_id: string
  period: string
  count: number
}

export const usageIndexes: IndexSpec = {
  collection: 'invoice_usage',
  indexes: [{ key: { period: 1 }, name: 'period' }],
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

/** Reserve `n` units if they fit under `limit`; all or nothing. */
export async function reserve(db: Db, accountId: string, period: string, limit: number, n = 1): Promise<boolean> {
  const take = () => usage(db).updateOne({ _id: idOf(accountId, period), count: { $lte: limit - n } }, { $inc: { count: n } })
  // The counter usually exists: one round trip. Only the month's first request creates it.
  if ((await take()).modifiedCount === 1) return true
  await ensureCounter(db, accountId, period)
  return (await take()).modifiedCount === 1
}

export async function release(db: Db, accountId: string, period: string, n = 1): Promise<void> {
  await usage(db).updateOne({ _id: idOf(accountId, period), count: { $gte: n } }, { $inc: { count: -n } })
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
