// Where rendered PDFs live. A single or demo invoice carries its PDF on its own document: one
// update stores it, on the latency path of POST /invoice. Batch rows are rendered a chunk at a
// time and their PDFs go to `invoice_pdfs` in one insertMany per chunk, so a chunk of rows costs
// a handful of write commands instead of two per row (docs/embedded-store.md, "What the engine
// costs": on the embedded engine every
// write command costs a copy of its collection; on MongoDB it is a round trip each).
// Readers never care which: storedPdf() finds it either way.
import { Binary, type Db } from 'mongodb'
import type { IndexSpec } from '../../platform/store/mongo.ts'
import { isDuplicateKey } from '../../platform/store/mongo.ts'
import { partitioned } from '../../platform/store/partitioned.ts'
import { slotKey } from './slot-key.ts'

export interface PdfDoc {
  /** The invoice id. */
  _id: string
  account_id: string | null
  batch_id?: string
  pdf: Binary
  size_bytes: number
  render_ms: number
  rendered_at: Date
  /** The invoice's own creation time: retention removes both together. */
  created_at: Date
}

export const pdfIndexes: IndexSpec = {
  collection: 'invoice_pdfs',
  partitions: 128,
  indexes: [{ key: { created_at: 1 }, name: 'created_at' }],
}

/** Partitioned like invoices (invoice-store.ts): a PDF is in the slot of its invoice id. */
export const pdfSlots = (db: Db) => partitioned<PdfDoc>(db, 'invoice_pdfs')
export const pdfs = (db: Db, id: string) => pdfSlots(db).of(slotKey(id))

export function toBuffer(b: Binary): Buffer {
  return Buffer.from(b.buffer.buffer, b.buffer.byteOffset, b.buffer.byteLength)
}

/**
 * Store the PDFs of a chunk of rows, before their rows are marked done (so a reader that sees
 * `done` always finds the PDF). A PDF already there comes from an earlier attempt of the same
 * chunk that died before marking its rows: it is replaced.
 */
export async function insertPdfs(db: Db, docs: PdfDoc[]): Promise<void> {
  // A chunk's rows share their batch's slot; grouped anyway, so any set of PDFs is stored right.
  const bySlot = new Map<string, PdfDoc[]>()
  for (const d of docs) bySlot.set(pdfs(db, d._id).collectionName, [...(bySlot.get(pdfs(db, d._id).collectionName) ?? []), d])
  for (const group of bySlot.values()) {
    const coll = pdfs(db, group[0]!._id)
    try {
      await coll.insertMany(group, { ordered: false })
    } catch (err) {
      if (!isDuplicateKey(err)) throw err
      await coll.deleteMany({ _id: { $in: group.map((d) => d._id) } })
      await coll.insertMany(group, { ordered: false })
    }
  }
}

/** The PDF of a done invoice (its document), wherever it was stored; null when it is gone (retention). */
export async function storedPdf(db: Db, doc: { _id: string; pdf?: Binary }): Promise<Buffer | null> {
  if (doc.pdf) return toBuffer(doc.pdf)
  const stored = await pdfs(db, doc._id).findOne({ _id: doc._id })
  return stored ? toBuffer(stored.pdf) : null
}

/** Retention: PDFs of invoices created before `cutoff`. */
export async function deletePdfsBefore(db: Db, cutoff: Date): Promise<number> {
  return pdfSlots(db).deleteMany({ created_at: { $lt: cutoff } })
}
