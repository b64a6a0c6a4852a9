// The forward target's health per endpoint, for the endpoints overview: the outcomes of its last
// FORWARD_WINDOW attempts, its last error and success, and how many of its captures sit
// dead-lettered. One small document per endpoint, written by the paths that make an attempt or
// move a capture into or out of the dead letter, so the overview reads it in one query instead of
// scanning attempts and captures (100,000 of them on a busy endpoint).
import type { Db } from 'mongodb'
import { logger } from '../../platform/logger.ts'
import type { IndexSpec } from '../../platform/store/mongo.ts'

/** Attempts the success rate is taken over. */
export const FORWARD_WINDOW = 50

export interface ForwardStatsDoc {
  _id: string // the endpoint token
  /** Attempts recorded so far. */
  attempts: number
  /**
   * Outcomes of the last FORWARD_WINDOW attempts, a ring keyed by attempt number mod the window:
   * 1 delivered, 0 failed. (The embedded engine has no $push with $slice.)
   */
  ring: Record<string, number>
  last_attempt_at: Date | null
  last_success_at: Date | null
  last_error: { message: string; status: number | null; at: Date } | null
  /**
   * Captures now dead-lettered: +1 when one is marked dead, −1 when it is retried, recovered or
   * deleted. A counter, so a retry racing a deletion of the same capture can leave it one off
   * (it is shown no lower than 0); the deliveries listing with status=dead is exact.
   */
  dead: number
}

export const FORWARD_STATS = 'webhook_forward_stats'
export const forwardStatsIndexes: IndexSpec = { collection: FORWARD_STATS, indexes: [] }

const stats = (db: Db) => db.collection<ForwardStatsDoc>(FORWARD_STATS)

/**
 * One attempt made (after its attempt document was recorded, so a re-run records it once). Two
 * small writes: the attempt's number, then its outcome in that number's place of the ring
 * (concurrent attempts get different numbers, so neither overwrites the other).
 */
export async function recordAttemptOutcome(db: Db, token: string, a: { ok: boolean; status: number | null; error: string | null; at: Date }): Promise<void> {
  const doc = await stats(db).findOneAndUpdate(
    { _id: token },
    {
      $inc: { attempts: 1 },
      $set: { last_attempt_at: a.at, ...(a.ok ? { last_success_at: a.at } : { last_error: { message: a.error ?? 'failed', status: a.status, at: a.at } }) },
    },
    { upsert: true, returnDocument: 'after' },
  )
  const n = doc?.attempts ?? 1
  await stats(db).updateOne({ _id: token }, { $set: { [`ring.${(n - 1) % FORWARD_WINDOW}`]: a.ok ? 1 : 0 } })
}

/** The outcomes in the window: how many, how many delivered. */
export function windowOf(doc: ForwardStatsDoc | undefined): { attempts: number; succeeded: number } {
  const outcomes = Object.values(doc?.ring ?? {})
  return { attempts: outcomes.length, succeeded: outcomes.filter((o) => o === 1).length }
}

/**
 * Captures moved into (+) or out of (−) the dead letter. Never throws: the move is made already,
 * and a retry or a deletion must not fail over the overview's figure (a failure is logged).
 */
export async function countDead(db: Db, token: string, delta: number): Promise<void> {
  if (delta === 0) return
  // Only an increase makes the document: a decrease for an endpoint without one (deleted) is dropped.
  await stats(db)
    .updateOne({ _id: token }, { $inc: { dead: delta } }, { upsert: delta > 0 })
    .catch((err: unknown) => logger.warn({ err: (err as Error).message, endpoint: token }, 'dead-letter count not updated'))
}

export async function forwardStatsOf(db: Db, tokens: string[]): Promise<Map<string, ForwardStatsDoc>> {
  if (!tokens.length) return new Map()
  const docs = await stats(db).find({ _id: { $in: tokens } }).toArray()
  return new Map(docs.map((d) => [d._id, d]))
}

export async function deleteForwardStats(db: Db, token: string): Promise<void> {
  await stats(db).deleteOne({ _id: token })
}
