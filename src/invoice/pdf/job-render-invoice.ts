// What an invoice-render job does, on the worker's main thread: fetch the request's logo, render in
// the thread pool (pool-render-threads.ts), record the invoice with its PDF and hand the PDF to the
// waiting request with the wake. Bad input (an unusable logo) fails for good with a 400 the client
// sees; other errors are retried, and the last attempt fails the invoice with a 503. Batch chunks
// (render-batch-chunk.ts) share the render step and these rules.
import type { Job } from 'bullmq'
import type { Platform } from '../../platform/platform.ts'
import { PermanentJobError, wakeWith } from '../../platform/queue/job.ts'
import { clock } from '../../platform/clock.ts'
import { metrics } from '../../platform/ops/metrics.ts'
import { hostname } from 'node:os'
import { fetchLogo, INVALID_LOGO, LogoError } from './logo.ts'
import { renderInPool } from './pool-render-threads.ts'
import { invoiceBodySchema, type InvoiceRequest } from '../invoice-schema.ts'
import { getInvoice, markDone, markFailed, markRendering, OPEN, recordDone, recordFailed, type InvoiceRecord } from '../store/invoice-store.ts'

/**
 * Render a single or demo invoice that nothing stored yet (the job carries who it is for) and
 * record it, with its PDF, in one write. Nothing is read first: the request is in the job, and an
 * invoice given up on meanwhile holds its _id already, so this record is refused and the render
 * is simply not kept (docs/architecture.md, "A single invoice, recorded once").
 */
export async function renderAndRecord(
  platform: Platform,
  job: Job,
  rec: InvoiceRecord & { request: InvoiceRequest },
  opts: { finalAttempt: boolean; threads: number },
): Promise<{ state: string; bytes?: number; worker?: string }> {
  try {
    const { pdf, renderMs } = await renderRequest(platform, rec.request, opts.threads)
    if (!(await recordDone(platform.db, rec, pdf, renderMs, platform.config.INVOICE_RETENTION_DAYS))) return { state: 'skipped' }
    wakeWith(job, pdf) // the waiting request answers with it, without reading it back
    return { state: 'done', bytes: pdf.length, worker: workerName }
  } catch (err) {
    if (isBadInput(err)) {
      await recordFailed(platform.db, rec, { status: 400, message: err.message }, platform.config.INVOICE_RETENTION_DAYS)
      throw new PermanentJobError(err.message)
    }
    if (opts.finalAttempt) await recordFailed(platform.db, rec, RENDER_FAILED, platform.config.INVOICE_RETENTION_DAYS)
    throw err
  }
}

/**
 * Render an invoice stored before its render (a job enqueued by an earlier version, or put back
 * from a stored row): load the request unless the job carries it, mark it rendering, store the PDF.
 */
export async function renderStoredInvoice(
  platform: Platform,
  id: string,
  opts: { finalAttempt: boolean; threads: number; request?: InvoiceRequest },
): Promise<{ state: string; bytes?: number; worker?: string }> {
  const { db } = platform
  let storedRequest: unknown
  if (!opts.request) {
    const doc = await getInvoice(db, id)
    if (!doc || !OPEN.includes(doc.status)) return { state: 'skipped' } // done, failed or abandoned meanwhile: nothing to do
    storedRequest = doc.request
  }
  // The 'rendering' mark is written while the render runs, not before it: it is off the
  // single-invoice latency path, and a render whose invoice was closed meanwhile (or that was
  // never stored) is not stored either.
  const marked = markRendering(db, id)
  marked.catch(() => undefined) // awaited below; a failure must not go unhandled meanwhile
  try {
    const request = opts.request ?? invoiceBodySchema.parse(storedRequest)
    const { pdf, renderMs } = await renderRequest(platform, request, opts.threads)
    if (!(await marked)) return { state: 'skipped' }
    const saved = await markDone(db, id, pdf, renderMs)
    // Which worker process rendered it: operators see how work spreads over a pool.
    return { state: saved ? 'done' : 'abandoned', bytes: pdf.length, worker: workerName }
  } catch (err) {
    if (isBadInput(err)) {
      await markFailed(db, id, { status: 400, message: err.message })
      throw new PermanentJobError(err.message)
    }
    if (opts.finalAttempt) await markFailed(db, id, RENDER_FAILED)
    throw err
  }
}

export const workerName = `${hostname()}:${process.pid}`

/** What the client sees for an invoice whose render failed on its last attempt. */
export const RENDER_FAILED = { status: 503, message: 'The invoice could not be rendered. Please retry.' }

/** An error that retrying cannot fix: the request's logo is unusable (the client sees a 400). */
export function isBadInput(err: unknown): err is Error {
  return err instanceof LogoError || (err instanceof Error && err.message === INVALID_LOGO)
}

/** Fetch the request's logo (safe-fetch) and render it in the thread pool. */
export async function renderRequest(platform: Platform, request: InvoiceRequest, threads: number): Promise<{ pdf: Buffer; renderMs: number }> {
  const logoDataUrl = request.logo_url ? await fetchLogo(request.logo_url, platform.config.outboundAllowPrivate) : undefined
  const started = performance.now()
  const pdf = await renderInPool({ request, logoDataUrl, today: clock.now().toISOString().slice(0, 10) }, threads)
  const renderMs = performance.now() - started
  metrics.renderDuration(renderMs)
  return { pdf, renderMs }
}
