// The ZIP of a finished batch: one file per successful row (a PDF, or XML for the ubl and
// xrechnung formats), named by row and invoice number,
// streamed with yazl. Each PDF is read from MongoDB only when the archive reaches it, so memory
// stays at about one invoice however large the batch. PDFs are stored, not deflated (they are
// already compressed).
import { Readable } from 'node:stream'
import type { Db } from 'mongodb'
import yazl from 'yazl'
import { logger } from '../../platform/logger.ts'
import type { RowState } from './batch-store.ts'
import { pdfs, toBuffer } from '../store/pdf-store.ts'
import { outputOf } from '../pdf-response.ts'

/** A file-system-safe entry name: row number (1-based) first, so names are unique and sort in row order. */
export function entryName(row: number, invoiceNumber: string | undefined, format?: string): string {
  const safe = (invoiceNumber ?? 'INV-001')
    .normalize('NFKC')
    .replace(/[^\p{L}\p{N}._-]+/gu, '_')
    .replace(/^[._]+/, '')
    .slice(0, 80)
  return `${String(row + 1).padStart(4, '0')}-${safe || 'invoice'}.${outputOf(format).ext}`
}

export function batchArchive(db: Db, rows: RowState[], mtime: Date): Readable {
  const zip = new yazl.ZipFile()
  for (const r of rows) {
    if (r.state !== 'done') continue
    zip.addReadStreamLazy(entryName(r.row, r.invoice_number, r.format), { mtime, compress: false }, (cb) => {
      pdfs(db, r.invoice_id).findOne({ _id: r.invoice_id }).then(
        (doc) => (doc ? cb(null, Readable.from([toBuffer(doc.pdf)])) : cb(new Error(`invoice ${r.invoice_id} is no longer stored`), undefined as never)),
        (err) => cb(err, undefined as never),
      )
    })
  }
  zip.end()
  const out = zip.outputStream as Readable
  // Headers are gone by the time an entry fails: all that is left is to cut the stream short,
  // which the client sees as a truncated download rather than a valid but incomplete ZIP.
  zip.on('error', (err: Error) => {
    logger.error({ err: err.message }, 'batch archive failed')
    out.destroy(err)
  })
  return out
}
