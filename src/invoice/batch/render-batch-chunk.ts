// What an invoice-batch-render job does: render a chunk of a batch's rows (a range of row numbers)
// and store them with a few writes for the whole chunk: one read, one `rendering` mark, one
// insertMany of PDFs, one `done` mark. Rows are rendered one after another, so a chunk never has
// more than one render waiting in the thread pool and a single invoice's render is never queued
// behind a whole chunk. A row with bad input (unusable logo) fails alone; any other error stores
// what the chunk has rendered so far and retries the rest; on the last attempt such a row fails
// alone (503) and the others still render.
// A retried chunk skips its rows that are done already, so no row is rendered twice into the count.
import type { Platform } from '../../platform/platform.ts'
import { clock } from '../../platform/clock.ts'
import { Binary } from 'mongodb'
import { insertPdfs, type PdfDoc } from '../store/pdf-store.ts'
import { isBadInput, RENDER_FAILED, renderRequest, workerName } from '../pdf/job-render-invoice.ts'
import { invoiceBodySchema } from '../invoice-schema.ts'
import { invoices, markFailed, markRowsDone, markRowsRendering, OPEN, type InvoiceDoc } from '../store/invoice-store.ts'

export interface BatchChunk {
  batch_id: string
  /** First row number of the chunk. */
  from: number
  /** One past the last row number. */
  to: number
}

export interface ChunkOutcome {
  state: 'done' | 'skipped'
  rendered: number
  failed: number
  worker: string
}

async function openRows(platform: Platform, chunk: BatchChunk): Promise<InvoiceDoc[]> {
  return invoices(platform.db, chunk.batch_id)
    .find({ batch_id: chunk.batch_id, row: { $gte: chunk.from, $lt: chunk.to }, status: { $in: OPEN } })
    .sort({ row: 1 })
    .toArray()
}

export async function renderBatchChunk(
  platform: Platform,
  chunk: BatchChunk,
  opts: { jobId: string; finalAttempt: boolean; threads: number },
): Promise<ChunkOutcome> {
  const { db } = platform
  const rows = await openRows(platform, chunk)
  if (!rows.length) return { state: 'skipped', rendered: 0, failed: 0, worker: workerName }
  // Written while the first row renders; awaited before anything is stored.
  const marked = markRowsRendering(db, rows.map((r) => r._id), opts.jobId)
  marked.catch(() => undefined)

  const rendered: PdfDoc[] = []
  let failed = 0
  let retry: unknown
  for (const row of rows) {
    try {
      const { pdf, renderMs } = await renderRequest(platform, invoiceBodySchema.parse(row.request), opts.threads)
      rendered.push({
        _id: row._id,
        account_id: row.account_id,
        batch_id: chunk.batch_id,
        pdf: new Binary(pdf),
        size_bytes: pdf.length,
        render_ms: Math.round(renderMs),
        rendered_at: clock.now(),
        created_at: row.created_at,
      })
    } catch (err) {
      if (isBadInput(err)) {
        await markFailed(db, row._id, { status: 400, message: err.message })
        failed++
      } else if (opts.finalAttempt) {
        // No attempt is left for this row; the rows after it still get theirs.
        if (await markFailed(db, row._id, RENDER_FAILED)) failed++
      } else {
        retry = err
        break
      }
    }
  }
  await marked
  await insertPdfs(db, rendered)
  // Rows closed meanwhile (failed by the watcher) stay closed; their PDF waits for retention.
  const done = await markRowsDone(db, rendered.map((r) => r._id))
  if (retry !== undefined) throw retry
  return { state: 'done', rendered: done, failed, worker: workerName }
}
