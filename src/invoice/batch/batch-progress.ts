// Driving a batch to its end, from the invoice-batch-watch job (and lazily from status reads):
// hand rows to the render queue if that has not happened yet (Redis was down at acceptance),
// hand back rows whose render job was lost (a few times; then fail them, so their quota unit
// comes back), and when every
// row is done or failed, finish the batch exactly once and send its callback.
import type { Platform } from '../../platform/platform.ts'
import { clock } from '../../platform/clock.ts'
import { enqueueMany } from '../../platform/queue/job.ts'
import { enqueueDurably } from '../../platform/queue/outbox.ts'
import { replicaHas } from '../../platform/redis/replica-ack.ts'
import { isDuplicateKey } from '../../platform/store/mongo.ts'
import { logger } from '../../platform/logger.ts'
import { BATCH_CHUNK_ROWS, invoiceBatchCallbackContract, invoiceBatchRenderContract } from '../job-contracts.ts'
import { getBatch, isComplete, markCallbackEnqueued, markEnqueued, markFinished, rowCounts, type BatchDoc } from './batch-store.ts'
import { RENDER_FAILED } from '../pdf/job-render-invoice.ts'
import { invoices, markFailed, requeueRows } from '../store/invoice-store.ts'

/**
 * Add a render job for every chunk that still has queued rows. Chunks are fixed ranges of row
 * numbers and the job id is the chunk's, so repeats (the watcher retrying) add nothing new.
 * The batch counts as enqueued only once a replica has the jobs (Sentinel, cluster): a failover
 * that lost them would otherwise leave its rows queued for ever; until then the watcher adds
 * them again.
 */
export async function enqueueRows(platform: Platform, batchId: string): Promise<void> {
  const queued = await invoices(platform.db, batchId)
    .aggregate<{ row: number }>([{ $match: { batch_id: batchId, status: 'queued' } }, { $project: { _id: 0, row: 1 } }])
    .toArray()
  const starts = [...new Set(queued.map(({ row }) => row - (row % BATCH_CHUNK_ROWS)))].sort((a, b) => a - b)
  await enqueueMany(
    platform,
    invoiceBatchRenderContract,
    starts.map((from) => ({ payload: { batch_id: batchId, from, to: from + BATCH_CHUNK_ROWS } })),
  )
  if (!(await replicaHas(platform, invoiceBatchRenderContract.queue))) {
    logger.warn({ batchId }, 'no replica acknowledged the batch render jobs; the watcher adds them again')
    return
  }
  await markEnqueued(platform.db, batchId)
}

/** How often a row whose render job was lost is handed back to the queue before it is failed. */
export const MAX_ROW_REQUEUES = 3

/**
 * Rows stuck in 'rendering' although their chunk's job is gone (Redis lost it: a failover, a
 * restart without its data) or failed/finished without them (a worker died more often than BullMQ
 * retries stalled jobs): give them back to the queue ('queued', then enqueueRows), at most
 * MAX_ROW_REQUEUES times; a row lost more often than that is failed, which releases its quota unit
 * exactly once. A worker that was still rendering such a row and stores it later is harmless: it
 * marks the row done (queued counts as open), and the new job then finds nothing to do.
 */
async function requeueOrphans(platform: Platform, batchId: string): Promise<{ requeued: number; failed: number }> {
  const cutoff = new Date(clock.nowMs() - 2 * platform.config.JOB_LOCK_MS)
  const stuck = await invoices(platform.db, batchId)
    .aggregate<{ _id: string; job_id?: string; requeues?: number }>([
      { $match: { batch_id: batchId, status: 'rendering', updated_at: { $lt: cutoff } } },
      { $project: { _id: 1, job_id: 1, requeues: 1 } },
    ])
    .toArray()
  const queue = platform.queues.queue(invoiceBatchRenderContract.queue)
  const states = new Map<string, string>()
  const back: string[] = []
  let failed = 0
  for (const { _id, job_id, requeues } of stuck) {
    const jobId = job_id ?? _id
    if (!states.has(jobId)) states.set(jobId, await queue.getJobState(jobId))
    const state = states.get(jobId)
    if (state !== 'failed' && state !== 'unknown' && state !== 'completed') continue
    if ((requeues ?? 0) < MAX_ROW_REQUEUES) back.push(_id)
    else if (await markFailed(platform.db, _id, RENDER_FAILED)) failed++
  }
  if (back.length) {
    // A finished or failed chunk job keeps its id in Redis for a while: remove it, or the
    // re-enqueue with the same id would add nothing.
    for (const jobId of new Set(stuck.filter((r) => back.includes(r._id)).map((r) => r.job_id ?? r._id))) {
      if (states.get(jobId) !== 'unknown') await queue.remove(jobId).catch(() => undefined)
    }
    await requeueRows(platform.db, back)
    logger.warn({ batchId, rows: back.length }, 'batch rows whose render job was lost: queued again')
    await enqueueRows(platform, batchId)
  }
  return { requeued: back.length, failed }
}

/** Record the callback delivery job (outbox first, so a Redis outage cannot lose it). */
async function enqueueCallback(platform: Platform, batch: BatchDoc): Promise<void> {
  if (!batch.callback || batch.callback.enqueued) return
  try {
    await enqueueDurably(platform, invoiceBatchCallbackContract, { batch_id: batch._id })
  } catch (err) {
    if (!isDuplicateKey(err)) throw err // already in the outbox from an earlier try
  }
  await markCallbackEnqueued(platform.db, batch._id)
}

export type Progress = { state: 'missing' } | { state: 'processing' } | { state: 'finished' }

/** One look at a batch: move it forward as far as it can go now. */
export async function advanceBatch(platform: Platform, batchId: string, opts: { repair: boolean }): Promise<Progress> {
  const batch = await getBatch(platform.db, batchId)
  if (!batch) return { state: 'missing' }
  if (batch.status === 'finished') {
    await enqueueCallback(platform, batch)
    return { state: 'finished' }
  }
  if (opts.repair && !batch.enqueued) await enqueueRows(platform, batchId)
  if (opts.repair) await requeueOrphans(platform, batchId)
  const counts = await rowCounts(platform.db, batchId)
  if (!isComplete(counts, batch.total)) return { state: 'processing' }
  if (await markFinished(platform.db, batchId, counts)) {
    await enqueueCallback(platform, { ...batch, status: 'finished' })
  }
  return { state: 'finished' }
}
