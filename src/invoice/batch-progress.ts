// Driving a batch to its end, from the invoice-batch-watch job (and lazily from status reads):
// hand rows to the render queue if that has not happened yet (Redis was down at acceptance),
// fail rows whose render job died for good (so their quota unit comes back), and when every
// row is done or failed, finish the batch exactly once and send its callback.
import type { Platform } from '../platform/platform.ts'
import { clock } from '../platform/clock.ts'
import { enqueueMany } from '../platform/job.ts'
import { enqueueDurably } from '../platform/outbox.ts'
import { replicaHas } from '../platform/replica-ack.ts'
import { isDuplicateKey } from '../platform/mongo.ts'
import { logger } from '../platform/logger.ts'
import { BATCH_CHUNK_ROWS, invoiceBatchCallbackContract, invoiceBatchRenderContract } from './job-contracts.ts'
import { getBatch, isComplete, markCallbackEnqueued, markEnqueued, markFinished, rowCounts, type BatchDoc } from './batch-store.ts'
import { RENDER_FAILED } from './render-invoice.ts'
import { invoices, markFailed } from './store.ts'

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

/**
 * Rows stuck in 'rendering' although their chunk's job is gone or failed (a worker died more
 * often than BullMQ retries stalled jobs): fail them, which releases their quota unit exactly once.
 */
async function failOrphans(platform: Platform, batchId: string): Promise<number> {
  const cutoff = new Date(clock.nowMs() - 2 * platform.config.JOB_LOCK_MS)
  const stuck = await invoices(platform.db, batchId)
    .aggregate<{ _id: string; job_id?: string }>([
      { $match: { batch_id: batchId, status: 'rendering', updated_at: { $lt: cutoff } } },
      { $project: { _id: 1, job_id: 1 } },
    ])
    .toArray()
  const queue = platform.queues.queue(invoiceBatchRenderContract.queue)
  const states = new Map<string, string>()
  let n = 0
  for (const { _id, job_id } of stuck) {
    const jobId = job_id ?? _id
    if (!states.has(jobId)) states.set(jobId, await queue.getJobState(jobId))
    const state = states.get(jobId)
    if (state === 'failed' || state === 'unknown' || state === 'completed') {
      if (await markFailed(platform.db, _id, RENDER_FAILED)) n++
    }
  }
  return n
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
  if (opts.repair) await failOrphans(platform, batchId)
  const counts = await rowCounts(platform.db, batchId)
  if (!isComplete(counts, batch.total)) return { state: 'processing' }
  if (await markFinished(platform.db, batchId, counts)) {
    await enqueueCallback(platform, { ...batch, status: 'finished' })
  }
  return { state: 'finished' }
}
