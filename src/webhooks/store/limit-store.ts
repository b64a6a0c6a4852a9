// Plan limits that must hold under concurrency: endpoints per account and captured requests per
// UTC day. Both are counters with a conditional $inc (`count < limit`), so N parallel requests
// with k units left make exactly k succeed; a refused or failed operation gives its unit back.
import type { Db } from 'mongodb'
import { dayKey } from '../../platform/clock.ts'
import { isDuplicateKey, type IndexSpec } from '../../platform/store/mongo.ts'

interface Counter {
  _id: string
  count: number
  account_id: string
  day?: string
}

export const limitIndexes: IndexSpec = {
  collection: 'webhook_counters',
  indexes: [{ key: { day: 1 }, name: 'day', partialFilterExpression: { day: { $type: 'string' } } }],
}

const counters = (db: Db) => db.collection<Counter>('webhook_counters')

async function take(db: Db, id: string, accountId: string, limit: number, extra: Partial<Counter> = {}): Promise<boolean> {
  const c = counters(db)
  const r = await c.updateOne({ _id: id, count: { $lt: limit } }, { $inc: { count: 1 } })
  if (r.modifiedCount === 1) return true
  // Either the counter does not exist yet or it is full: create it (racing creators are fine).
  try {
    await c.updateOne({ _id: id }, { $setOnInsert: { count: 0, account_id: accountId, ...extra } }, { upsert: true })
  } catch (err) {
    if (!isDuplicateKey(err)) throw err
  }
  const again = await c.updateOne({ _id: id, count: { $lt: limit } }, { $inc: { count: 1 } })
  return again.modifiedCount === 1
}

async function give(db: Db, id: string): Promise<void> {
  await counters(db).updateOne({ _id: id, count: { $gt: 0 } }, { $inc: { count: -1 } })
}

const endpointKey = (accountId: string) => `ep:${accountId}`
const dayCounterKey = (accountId: string, day: string) => `day:${accountId}:${day}`

export const takeEndpointSlot = (db: Db, accountId: string, limit: number) => take(db, endpointKey(accountId), accountId, limit)
export const releaseEndpointSlot = (db: Db, accountId: string) => give(db, endpointKey(accountId))

export const takeDailyRequest = (db: Db, accountId: string, now: Date, limit: number) =>
  take(db, dayCounterKey(accountId, dayKey(now)), accountId, limit, { day: dayKey(now) })
/**
 * `n` captures' worth of today's counter in one write when all `n` fit (the common case under
 * load); otherwise, near the limit or before the day's counter exists, one by one, so exactly as
 * many succeed as units are left. One answer per unit, in order.
 */
export async function takeDailyRequests(db: Db, accountId: string, now: Date, limit: number, n: number): Promise<boolean[]> {
  if (n > 1) {
    const r = await counters(db).updateOne({ _id: dayCounterKey(accountId, dayKey(now)), count: { $lte: limit - n } }, { $inc: { count: n } })
    if (r.modifiedCount === 1) return new Array<boolean>(n).fill(true)
  }
  const out: boolean[] = []
  for (let i = 0; i < n; i++) out.push(await takeDailyRequest(db, accountId, now, limit))
  return out
}
export const releaseDailyRequest = (db: Db, accountId: string, now: Date) => give(db, dayCounterKey(accountId, dayKey(now)))

/** Captured requests counted today (UTC). */
export async function usedToday(db: Db, accountId: string, now: Date): Promise<number> {
  return (await counters(db).findOne({ _id: dayCounterKey(accountId, dayKey(now)) }))?.count ?? 0
}

/** Day counters before `day` are history: the expire job prunes them. */
export async function pruneDayCounters(db: Db, beforeDay: string): Promise<number> {
  const r = await counters(db).deleteMany({ day: { $lt: beforeDay } })
  return r.deletedCount
}
