// Batches in MongoDB. A batch is one document here plus one invoice document per row (kind
// 'batch', in `invoices`); row states live only on the rows, so counts are always derived from
// them and can never drift. The batch document holds what is about the whole: who, how many,
// whether its rows were handed to the queue, whether it finished, and its completion callback.
import type { Db, Filter } from 'mongodb'
import { clock } from '../../platform/clock.ts'
import type { IndexSpec } from '../../platform/store/mongo.ts'
import { invoices, type InvoiceStatus } from '../store/invoice-store.ts'

export type BatchStatus = 'processing' | 'finished'
export type CallbackState = 'pending' | 'delivered' | 'failed'

export interface BatchCounts {
  queued: number
  rendering: number
  done: number
  failed: number
}

export interface BatchCallback {
  url: string
  /** Standard Webhooks signing secret (whsec_…), handed to the client once, at creation. */
  secret: string
  state: CallbackState
  /** Set once the delivery job is recorded (outbox or queue), so it is enqueued only once. */
  enqueued: boolean
  attempts: number
  last_status?: number
  last_error?: string
  delivered_at?: Date
}

export interface BatchDoc {
  _id: string
  account_id: string
  total: number
  period: string
  status: BatchStatus
  /** True once every row's render job was added to the queue (the watcher retries until it is). */
  enqueued: boolean
  status_url: string
  archive_url: string
  callback?: BatchCallback
  /** Final counts, frozen when the batch finished. */
  counts?: BatchCounts
  created_at: Date
  updated_at: Date
  finished_at?: Date
}

export const batchIndexes: IndexSpec = {
  collection: 'invoice_batches',
  indexes: [
    { key: { account_id: 1, created_at: -1 }, name: 'account_created' },
    { key: { created_at: 1 }, name: 'created_at' },
  ],
}

export const batches = (db: Db) => db.collection<BatchDoc>('invoice_batches')

export async function insertBatch(db: Db, doc: Omit<BatchDoc, 'updated_at' | 'status' | 'enqueued'>): Promise<void> {
  await batches(db).insertOne({ ...doc, status: 'processing', enqueued: false, updated_at: clock.now() })
}

export async function getBatch(db: Db, id: string, accountId?: string): Promise<BatchDoc | null> {
  const doc = await batches(db).findOne({ _id: id })
  if (!doc || (accountId !== undefined && doc.account_id !== accountId)) return null
  return doc
}

/** The account's batches, newest first (ties by id), below the cursor `before`. */
export async function listBatches(db: Db, accountId: string, opts: { limit: number; before?: { created_at: Date; id: string }; status?: BatchStatus }): Promise<BatchDoc[]> {
  const filter: Filter<BatchDoc> = { account_id: accountId }
  if (opts.status) filter.status = opts.status
  if (opts.before) filter.$or = [{ created_at: { $lt: opts.before.created_at } }, { created_at: opts.before.created_at, _id: { $lt: opts.before.id } }]
  return batches(db).find(filter).sort({ created_at: -1, _id: -1 }).limit(opts.limit).toArray()
}

export async function markEnqueued(db: Db, id: string): Promise<void> {
  await batches(db).updateOne({ _id: id }, { $set: { enqueued: true, updated_at: clock.now() } })
}

export interface RowState {
  row: number
  invoice_id: string
  state: InvoiceStatus
  error?: { status: number; message: string }
  invoice_number?: string
  /** The row's output format (absent: pdf). */
  format?: string
}

/**
 * Every row's state, in row order. An aggregate with $project, because find projections are
 * ignored by the embedded engine and row documents carry their PDFs.
 */
export async function rowStates(db: Db, batchId: string): Promise<RowState[]> {
  const docs = await invoices(db, batchId)
    .aggregate<{ _id: string; row: number; status: InvoiceStatus; error?: RowState['error']; invoice_number?: string; format?: string }>([
      { $match: { batch_id: batchId } },
      { $sort: { row: 1 } },
      { $project: { _id: 1, row: 1, status: 1, error: 1, invoice_number: '$request.invoice_number', format: '$request.format' } },
    ])
    .toArray()
  return docs.map((d) => ({
    row: d.row,
    invoice_id: d._id,
    state: d.status,
    ...(d.error ? { error: d.error } : {}),
    ...(typeof d.invoice_number === 'string' ? { invoice_number: d.invoice_number } : {}),
    ...(typeof d.format === 'string' ? { format: d.format } : {}),
  }))
}

export async function rowCounts(db: Db, batchId: string): Promise<BatchCounts> {
  const groups = await invoices(db, batchId)
    .aggregate<{ _id: InvoiceStatus; n: number }>([{ $match: { batch_id: batchId } }, { $group: { _id: '$status', n: { $sum: 1 } } }])
    .toArray()
  const counts: BatchCounts = { queued: 0, rendering: 0, done: 0, failed: 0 }
  for (const g of groups) if (g._id in counts) counts[g._id] = g.n
  return counts
}

export function countRows(rows: RowState[]): BatchCounts {
  const counts: BatchCounts = { queued: 0, rendering: 0, done: 0, failed: 0 }
  for (const r of rows) counts[r.state]++
  return counts
}

export const isComplete = (c: BatchCounts, total: number) => c.done + c.failed >= total && c.queued + c.rendering === 0

/** processing → finished, once: true only for the caller that made the transition. */
export async function markFinished(db: Db, id: string, counts: BatchCounts): Promise<boolean> {
  const now = clock.now()
  const r = await batches(db).updateOne({ _id: id, status: 'processing' }, { $set: { status: 'finished', counts, finished_at: now, updated_at: now } })
  return r.modifiedCount === 1
}

export async function markCallbackEnqueued(db: Db, id: string): Promise<void> {
  await batches(db).updateOne({ _id: id }, { $set: { 'callback.enqueued': true } })
}

export async function recordCallbackAttempt(
  db: Db,
  id: string,
  outcome: { state: CallbackState; status?: number; error?: string },
): Promise<void> {
  const set: Record<string, unknown> = { 'callback.state': outcome.state, updated_at: clock.now() }
  if (outcome.status !== undefined) set['callback.last_status'] = outcome.status
  if (outcome.error !== undefined) set['callback.last_error'] = outcome.error
  if (outcome.state === 'delivered') set['callback.delivered_at'] = clock.now()
  await batches(db).updateOne({ _id: id }, { $set: set, $inc: { 'callback.attempts': 1 } })
}

/** Batches created before `cutoff` (their rows are removed by the same retention rule). */
export async function deleteBatchesBefore(db: Db, cutoff: Date): Promise<number> {
  const r = await batches(db).deleteMany({ created_at: { $lt: cutoff } })
  return r.deletedCount
}
