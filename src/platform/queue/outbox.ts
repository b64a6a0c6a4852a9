// Transactional outbox for work that must not be lost when Redis is down: the job is written to
// MongoDB first, then enqueued; the outbox-sweep job re-enqueues whatever was not. Job ids are the
// idempotency keys, and processors check MongoDB state, so a double enqueue does no double work.
import type { Db } from 'mongodb'
import { clock } from '../clock.ts'
import { z } from 'zod'
import { defineJobContract, enqueue, type JobContract } from './job.ts'
import { logger } from '../logger.ts'
import type { IndexSpec } from '../store/mongo.ts'
import type { Platform } from '../platform.ts'
import { replicaHas } from '../redis/replica-ack.ts'

interface OutboxDoc {
  _id: string // queue:jobId
  queue: string
  job_id: string
  payload: unknown
  opts: { delay?: number; priority?: number }
  created_at: Date
  attempts: number
}

export const outboxIndexes: IndexSpec = { collection: 'outbox', indexes: [{ key: { created_at: 1 }, name: 'created_at' }] }

const outbox = (db: Db) => db.collection<OutboxDoc>('outbox')

/** The outbox sweep's own job: every 10 s (a scheduler), re-enqueue what is still recorded. */
export const outboxSweepContract = defineJobContract({
  queue: 'outbox-sweep',
  schema: z.object({ min_age_ms: z.number().int().min(0).optional() }),
})

/**
 * Record, then enqueue; on enqueue failure the record stays for the sweep. Never throws for Redis.
 * The job id is `jobId`, else the contract's id for the payload: an outbox entry needs one.
 */
export async function enqueueDurably<S extends z.ZodType>(
  platform: Platform,
  contract: JobContract<S>,
  payload: z.infer<S>,
  opts: { jobId?: string; delay?: number; priority?: number } = {},
): Promise<boolean> {
  const { jobId: explicitId, ...jobOpts } = opts
  const data = contract.schema.parse(payload)
  const jobId = explicitId ?? contract.id?.(data)
  if (jobId === undefined) throw new Error(`enqueueDurably: ${contract.queue} jobs need a job id`)
  const _id = `${contract.queue}:${jobId}`
  await outbox(platform.db).insertOne({ _id, queue: contract.queue, job_id: jobId, payload: data, opts: jobOpts, created_at: clock.now(), attempts: 0 })
  try {
    await enqueue(platform, contract, data, { ...jobOpts, jobId })
    // Behind Sentinel or on a cluster, a job a replica does not have yet would be lost by a
    // failover now: the entry stays and the sweep adds the job again (its id makes that
    // harmless when the job did survive). replica-ack.ts.
    if (!(await replicaHas(platform, contract.queue))) {
      logger.warn({ queue: contract.queue, jobId }, 'no replica acknowledged the job; left in outbox')
      return false
    }
    await outbox(platform.db).deleteOne({ _id })
    return true
  } catch (err) {
    logger.warn({ queue: contract.queue, jobId, err: (err as Error).message }, 'enqueue failed; left in outbox')
    return false
  }
}

/** Re-enqueue outbox entries older than `minAgeMs`, each through its queue's contract. */
export async function sweepOutbox(platform: Platform, contracts: JobContract[], minAgeMs = 5_000, max = 500): Promise<number> {
  const byQueue = new Map(contracts.map((c) => [c.queue, c]))
  const cutoff = new Date(clock.nowMs() - minAgeMs)
  const docs = await outbox(platform.db).find({ created_at: { $lt: cutoff } }).sort({ created_at: 1 }).limit(max).toArray()
  let n = 0
  for (const doc of docs) {
    const def = byQueue.get(doc.queue)
    if (!def) continue
    try {
      await enqueue(platform, def, doc.payload, { ...doc.opts, jobId: doc.job_id })
      if (!(await replicaHas(platform, def.queue))) throw new Error('no replica acknowledged the job')
      await outbox(platform.db).deleteOne({ _id: doc._id })
      n++
    } catch {
      await outbox(platform.db).updateOne({ _id: doc._id }, { $inc: { attempts: 1 } })
    }
  }
  return n
}
