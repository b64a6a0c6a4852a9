// Transactional outbox for work that must not be lost when Redis is down: the job is written to
// MongoDB first, then enqueued; the outbox-sweep job re-enqueues whatever was not. Job ids are the
// idempotency keys, and processors check MongoDB state, so a double enqueue does no double work.
import type { Db } from 'mongodb'
import type { z } from 'zod'
import { clock } from './clock.ts'
import { enqueue, type JobDefinition } from './job.ts'
import { logger } from './logger.ts'
import type { IndexSpec } from './mongo.ts'
import type { Platform } from './platform.ts'
import type { QueueName } from './queue-names.ts'

interface OutboxDoc {
  _id: string // queue:jobId
  queue: QueueName
  job_id: string
  payload: unknown
  opts: { delay?: number; priority?: number }
  created_at: Date
  attempts: number
}

export const outboxIndexes: IndexSpec = { collection: 'outbox', indexes: [{ key: { created_at: 1 }, name: 'created_at' }] }

const outbox = (db: Db) => db.collection<OutboxDoc>('outbox')

/** Record, then enqueue; on enqueue failure the record stays for the sweep. Never throws for Redis. */
export async function enqueueDurably<S extends z.ZodType>(
  platform: Platform,
  def: JobDefinition<S>,
  payload: z.infer<S>,
  jobId: string,
  opts: { delay?: number; priority?: number } = {},
): Promise<boolean> {
  const _id = `${def.queue}:${jobId}`
  await outbox(platform.db).insertOne({ _id, queue: def.queue, job_id: jobId, payload: def.schema.parse(payload), opts, created_at: clock.now(), attempts: 0 })
  try {
    await enqueue(platform, def, payload, { ...opts, jobId })
    await outbox(platform.db).deleteOne({ _id })
    return true
  } catch (err) {
    logger.warn({ queue: def.queue, jobId, err: (err as Error).message }, 'enqueue failed; left in outbox')
    return false
  }
}

/** Re-enqueue outbox entries older than `minAgeMs`. */
export async function sweepOutbox(platform: Platform, defs: JobDefinition[], minAgeMs = 5_000, max = 500): Promise<number> {
  const byQueue = new Map(defs.map((d) => [d.queue, d]))
  const cutoff = new Date(clock.nowMs() - minAgeMs)
  const docs = await outbox(platform.db).find({ created_at: { $lt: cutoff } }).sort({ created_at: 1 }).limit(max).toArray()
  let n = 0
  for (const doc of docs) {
    const def = byQueue.get(doc.queue)
    if (!def) continue
    try {
      await enqueue(platform, def, doc.payload, { ...doc.opts, jobId: doc.job_id })
      await outbox(platform.db).deleteOne({ _id: doc._id })
      n++
    } catch {
      await outbox(platform.db).updateOne({ _id: doc._id }, { $inc: { attempts: 1 } })
    }
  }
  return n
}
