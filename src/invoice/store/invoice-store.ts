// Invoices in MongoDB: the request as accepted, its state, and the rendered PDF (where: see
// pdf-store.ts). A batch row is stored when the batch is accepted and its render only while it is
// still wanted (queued/rendering), so an abandoned row is never charged; the quota unit of a
// failed invoice is released exactly once. A single or demo invoice is recorded once, when it is
// settled: by its render (done, or failed for good) or by whoever gives up on it first (a
// tombstone: the waiting request at its timeout, the sweep of a dead process's holds); the unique
// _id decides which (docs/architecture.md, "A single invoice, recorded once").
import { Binary, type Db } from 'mongodb'
import { clock } from '../../platform/clock.ts'
import { slotKey } from './slot-key.ts'
import { partitioned } from '../../platform/store/partitioned.ts'
import { isDuplicateKey, type IndexSpec } from '../../platform/store/mongo.ts'
import { deletePdfsBefore, toBuffer } from './pdf-store.ts'
import { release } from './quota-store.ts'
import type { InvoiceRequest } from '../invoice-schema.ts'

export type InvoiceStatus = 'queued' | 'rendering' | 'done' | 'failed'
export type InvoiceKind = 'single' | 'demo' | 'batch'

export interface InvoiceDoc {
  _id: string
  account_id: string | null
  kind: InvoiceKind
  batch_id?: string
  row?: number
  status: InvoiceStatus
  /** As accepted; absent only from a tombstone the hold sweep wrote (it never had the request). */
  request?: InvoiceRequest
  /** Quota period charged, while `charged` is true. */
  period: string | null
  charged: boolean
  created_at: Date
  updated_at: Date
  expires_at: Date
  /** Batch rows: the invoice-batch-render job that marked the row rendering. */
  job_id?: string
  /** Batch rows: how often the row went back to the queue because its render job was lost. */
  requeues?: number
  /** Single and demo invoices carry their PDF; batch rows' PDFs are in invoice_pdfs (pdf-store.ts). */
  pdf?: Binary
  size_bytes?: number
  render_ms?: number
  error?: { status: number; message: string }
}

export const invoiceIndexes: IndexSpec = {
  collection: 'invoices',
  // 128 slots on the embedded engine: 20,000 invoices with their PDFs are ~160 per slot.
  partitions: 128,
  indexes: [
    { key: { account_id: 1, created_at: -1 }, name: 'account_created' },
    { key: { batch_id: 1, row: 1 }, name: 'batch_row', partialFilterExpression: { batch_id: { $exists: true } } },
    { key: { status: 1, updated_at: 1 }, name: 'status_updated' },
    { key: { expires_at: 1 }, name: 'expires_at' },
  ],
}

/** Every slot of the partitioned invoices collection (docs/embedded-store.md). */
export const invoiceSlots = (db: Db) => partitioned<InvoiceDoc>(db, 'invoices')
/**
 * The slot holding invoice `id`, or the rows of batch `id`: chosen by the first SLOT_KEY
 * characters, which a batch's rows share with the batch id (batchRowId), so a batch's rows are
 * one collection and every query by batch id or by row id touches that one.
 */
export const invoices = (db: Db, id: string) => invoiceSlots(db).of(slotKey(id))


export const OPEN: InvoiceStatus[] = ['queued', 'rendering']

/** Who a single or demo invoice is for, and what it costs: set when accepted, recorded with its outcome. */
export interface InvoiceRecord {
  _id: string
  account_id: string | null
  kind: 'single' | 'demo'
  /** The quota period of the account's hold (null for a demo: nothing is charged). */
  period: string | null
  created_at: Date
  request?: InvoiceRequest
}

/**
 * Demo invoices are kept an hour, the others INVOICE_RETENTION_DAYS (then the retention job removes
 * them: demo ones by this field, the others by `created_at`, so a changed setting applies to all).
 */
const expiresAt = (kind: InvoiceKind, createdAt: Date, retentionDays: number) =>
  new Date(createdAt.getTime() + (kind === 'demo' ? 3_600_000 : retentionDays * 86_400_000))

/**
 * Record a rendered single or demo invoice with its PDF, charged when it has a period. False when
 * the invoice is recorded already: given up on (a tombstone) or rendered twice (a job put back
 * after Redis lost it while a worker was still rendering it); the first record stands.
 */
export async function recordDone(db: Db, rec: InvoiceRecord, pdf: Buffer, renderMs: number, retentionDays: number): Promise<boolean> {
  const now = clock.now()
  return insertOnce(db, {
    ...rec,
    status: 'done',
    charged: rec.period !== null,
    pdf: new Binary(pdf),
    size_bytes: pdf.length,
    render_ms: Math.round(renderMs),
    updated_at: now,
    expires_at: expiresAt(rec.kind, rec.created_at, retentionDays),
  })
}

/**
 * Record a single or demo invoice as failed and give its unit back (releaseIfFailed: once, whoever
 * calls it; a reader of the record calls it again in case this process died in between). False
 * when it is recorded already, done or failed: then that record is the outcome. Either way the
 * invoice is recorded, so its hold is confirmed like a rendered one's.
 */
export async function recordFailed(db: Db, rec: InvoiceRecord, error: { status: number; message: string }, retentionDays: number): Promise<boolean> {
  const now = clock.now()
  const inserted = await insertOnce(db, { ...rec, status: 'failed', charged: rec.period !== null, error, updated_at: now, expires_at: expiresAt(rec.kind, rec.created_at, retentionDays) })
  if (inserted && rec.period !== null) await releaseIfFailed(db, rec._id)
  return inserted
}

async function insertOnce(db: Db, doc: InvoiceDoc): Promise<boolean> {
  try {
    await invoices(db, doc._id).insertOne(doc)
    return true
  } catch (err) {
    if (isDuplicateKey(err)) return false
    throw err
  }
}

/** Store a single invoice before its render, as an earlier version did (its jobs carry no `record`; tests build such rows). */
export async function insertInvoice(db: Db, doc: Omit<InvoiceDoc, 'updated_at' | 'status'>): Promise<void> {
  await invoices(db, doc._id).insertOne({ ...doc, status: 'queued', updated_at: clock.now() })
}

/** Mark an open invoice as rendering; false when it was closed (done, failed, abandoned) meanwhile. */
export async function markRendering(db: Db, id: string): Promise<boolean> {
  const r = await invoices(db, id).updateOne({ _id: id, status: { $in: OPEN } }, { $set: { status: 'rendering', updated_at: clock.now() } })
  return r.matchedCount === 1
}

/**
 * Mark a chunk of batch rows as rendering by the job `jobId` (one write for the chunk). The job id
 * lets the batch watcher (batch-progress.ts) ask the queue whether the rows' job is still alive.
 */
export async function markRowsRendering(db: Db, ids: string[], jobId: string): Promise<void> {
  if (!ids.length) return
  await invoices(db, ids[0]!).updateMany({ _id: { $in: ids }, status: { $in: OPEN } }, { $set: { status: 'rendering', job_id: jobId, updated_at: clock.now() } })
}

/** Batch rows whose render job was lost go back to 'queued' (counted, so a row cannot loop for ever). */
export async function requeueRows(db: Db, ids: string[]): Promise<void> {
  if (!ids.length) return
  await invoices(db, ids[0]!).updateMany(
    { _id: { $in: ids }, status: 'rendering' },
    { $set: { status: 'queued', updated_at: clock.now() }, $unset: { job_id: '' }, $inc: { requeues: 1 } },
  )
}

/** Mark a chunk of batch rows done (their PDFs are already in invoice_pdfs). One write. */
export async function markRowsDone(db: Db, ids: string[]): Promise<number> {
  if (!ids.length) return 0
  const r = await invoices(db, ids[0]!).updateMany({ _id: { $in: ids }, status: { $in: OPEN } }, { $set: { status: 'done', updated_at: clock.now() } })
  return r.modifiedCount
}

/** Store the PDF unless the invoice was abandoned meanwhile. */
export async function markDone(db: Db, id: string, pdf: Buffer, renderMs: number): Promise<boolean> {
  const r = await invoices(db, id).updateOne(
    { _id: id, status: { $in: OPEN } },
    { $set: { status: 'done', pdf: new Binary(pdf), size_bytes: pdf.length, render_ms: Math.round(renderMs), updated_at: clock.now() } },
  )
  return r.modifiedCount === 1
}

/** Fail an open invoice and give back its quota unit (once, whoever calls first). */
export async function markFailed(db: Db, id: string, error: { status: number; message: string }): Promise<boolean> {
  const r = await invoices(db, id).updateOne({ _id: id, status: { $in: OPEN } }, { $set: { status: 'failed', error, updated_at: clock.now() } })
  await releaseIfFailed(db, id)
  return r.modifiedCount === 1
}

export async function releaseIfFailed(db: Db, id: string): Promise<void> {
  const doc = await invoices(db, id).findOneAndUpdate({ _id: id, status: 'failed', charged: true }, { $set: { charged: false } })
  if (doc?.account_id && doc.period) await release(db, doc.account_id, doc.period)
}

/**
 * Single and demo invoices an earlier version stored before their render, still open although
 * created before `cutoff`: their request was abandoned (the API process waiting for them died,
 * possibly before the job was even enqueued), so no one will fail them on a timeout. Fail them,
 * which gives their quota unit back. (Invoices are no longer stored open: this finds none of them.)
 */
export async function failAbandoned(db: Db, cutoff: Date, error: { status: number; message: string }): Promise<number> {
  const open = await invoiceSlots(db).findAll({ kind: { $in: ['single', 'demo'] }, status: { $in: OPEN }, created_at: { $lt: cutoff } })
  let n = 0
  for (const doc of open) if (await markFailed(db, doc._id, error)) n++
  return n
}

export async function getInvoice(db: Db, id: string): Promise<InvoiceDoc | null> {
  return invoices(db, id).findOne({ _id: id })
}

/** Retention: demo invoices at their expires_at, all others once created before `cutoff`. */
export async function deleteExpiredInvoices(db: Db, now: Date, cutoff: Date): Promise<number> {
  const demo = await invoiceSlots(db).deleteMany({ kind: 'demo', expires_at: { $lt: now } })
  const kept = await invoiceSlots(db).deleteMany({ kind: { $in: ['single', 'batch'] }, created_at: { $lt: cutoff } })
  await deletePdfsBefore(db, cutoff)
  return demo + kept
}

/** The PDF a single or demo invoice carries (done). */
export function pdfBytes(doc: Pick<InvoiceDoc, 'pdf'>): Buffer {
  return toBuffer(doc.pdf!)
}
