// Bulk recovery: one call re-sends every dead-lettered forward of an endpoint received since a
// time. The request stores a recovery document (its id is derived from endpoint + since, so
// asking twice is the same recovery) and enqueues a job with that id; the job gives each dead
// request a new forward round (as POST …/retry does) and counts progress in the document.
// Re-running it after a crash skips requests that are no longer dead.
import { createHash } from 'node:crypto'
import type { Db } from 'mongodb'
import { clock } from '../../platform/clock.ts'
import { enqueueDurably } from '../../platform/queue/outbox.ts'
import type { Platform } from '../../platform/platform.ts'
import type { IndexSpec } from '../../platform/store/mongo.ts'
import { captureCollection, captures, capturesAfter } from '../store/capture-store.ts'
import { endpoints } from '../store/endpoint-store.ts'
import { countDead } from '../store/forward-stats.ts'
import { scheduleForward } from './forward-schedule.ts'
import { captureRecoverContract } from '../job-contracts.ts'
import { wireTime } from '../store/time.ts'

export interface RecoveryDoc {
  _id: string
  endpoint_id: string
  since: Date
  status: 'queued' | 'running' | 'done'
  /** Dead-lettered requests found when the job started. */
  total: number | null
  resent: number
  created_at: Date
  finished_at: Date | null
}

export const recoveries = (db: Db) => db.collection<RecoveryDoc>('webhook_recoveries')
export const recoveryIndexes: IndexSpec = { collection: 'webhook_recoveries', indexes: [{ key: { endpoint_id: 1 }, name: 'endpoint' }] }

export const recoveryId = (token: string, since: Date) => `rec_${createHash('sha256').update(`${token}|${since.getTime()}`).digest('hex').slice(0, 24)}`

export function presentRecovery(r: RecoveryDoc) {
  return { recovery_id: r._id, status: r.status, since: wireTime(r.since), total: r.total, resent: r.resent, created_at: wireTime(r.created_at), finished_at: wireTime(r.finished_at) }
}

/** Start (or find) the recovery of `token` since `since`. */
export async function startRecovery(platform: Platform, token: string, since: Date): Promise<{ doc: RecoveryDoc; created: boolean }> {
  const _id = recoveryId(token, since)
  const r = await recoveries(platform.db).updateOne(
    { _id },
    { $setOnInsert: { endpoint_id: token, since, status: 'queued', total: null, resent: 0, created_at: clock.now(), finished_at: null } },
    { upsert: true },
  )
  const created = r.upsertedCount === 1
  if (created) await enqueueDurably(platform, captureRecoverContract, { recovery_id: _id })
  return { doc: (await recoveries(platform.db).findOne({ _id }))!, created }
}

export async function runRecovery(platform: Platform, id: string): Promise<{ resent: number }> {
  const { db } = platform
  const rec = await recoveries(db).findOne({ _id: id })
  if (!rec || rec.status === 'done') return { resent: rec?.resent ?? 0 }
  const filter = { endpoint_id: rec.endpoint_id, 'forward.status': 'dead' as const, received_at: { $gte: rec.since } }
  if (rec.total === null) {
    await recoveries(db).updateOne({ _id: id, total: null }, { $set: { total: await captures(db).countDocuments(filter), status: 'running' } })
  }
  const top = (await endpoints(db).findOne({ _id: rec.endpoint_id }))?.seq ?? 0
  for (let from = 0; ; ) {
    const batch = await capturesAfter(db, rec.endpoint_id, { after: from, top, limit: 100 }, filter)
    if (!batch.length) break
    from = batch.at(-1)!.id
    for (const cap of batch) {
      const round = cap.forward!.round + 1
      const u = await captureCollection(db, rec.endpoint_id, cap.id).updateOne(
        { _id: cap._id, 'forward.status': 'dead', 'forward.round': cap.forward!.round },
        { $set: { 'forward.status': 'pending', 'forward.round': round, 'forward.next_attempt_at': null } },
      )
      if (u.modifiedCount === 0) continue // retried by someone else meanwhile
      await countDead(db, rec.endpoint_id, -1)
      await scheduleForward(platform, { endpoint_id: rec.endpoint_id, request_id: cap.id, round, attempt: 1 }, 0)
      await recoveries(db).updateOne({ _id: id }, { $inc: { resent: 1 } })
    }
  }
  await recoveries(db).updateOne({ _id: id }, { $set: { status: 'done', finished_at: clock.now() } })
  return { resent: (await recoveries(db).findOne({ _id: id }))?.resent ?? 0 }
}
