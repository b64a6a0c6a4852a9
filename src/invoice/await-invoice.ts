// Ingress side of a render: wait (bounded) for the job and answer with the PDF its worker hands
// back with the wake, or with the invoice as recorded in MongoDB, the source of truth
// (platform/queue/await-outcome.ts). While it waits, the waiter puts the job back if Redis lost it
// (failover, restart without data): same job id and payload, and the invoice is recorded once
// whoever renders it. A render that times out is given up: recorded failed, so its quota unit
// comes back and a late render is not kept (docs/architecture.md, "A single invoice, recorded once").
import { admitToQueue } from '../platform/queue/admission.ts'
import { awaitOutcome, listenForOutcome } from '../platform/queue/await-outcome.ts'
import { HttpError, gatewayTimeout } from '../platform/http/errors.ts'
import { enqueueAwaited } from '../platform/queue/job.ts'
import { logger } from '../platform/logger.ts'
import type { JobSettled } from '../platform/queue/queues.ts'
import type { Platform } from '../platform/platform.ts'
import { invoiceRenderContract, type InvoiceRenderPayload } from './job-contracts.ts'
import { holdConfirmations } from './store/hold-confirmations.ts'
import { getInvoice, invoices, pdfBytes, recordFailed, releaseIfFailed, type InvoiceDoc, type InvoiceRecord } from './store/invoice-store.ts'

const QUEUE = invoiceRenderContract.queue

export const RENDER_TIMEOUT_MESSAGE = 'Invoice rendering timed out. Please retry; this request was not counted.'

/**
 * Refuse (503 + Retry-After) before anything is stored or counted when no worker renders, or when
 * the renders already waiting would take longer than RENDER_ADMIT_WAIT_MS to start.
 */
export function admitRender(platform: Platform): Promise<void> {
  const { RENDER_ADMIT_WAIT_MS, RENDER_TIMEOUT_MS } = platform.config
  return admitToQueue(platform, QUEUE, RENDER_ADMIT_WAIT_MS ?? Math.floor(RENDER_TIMEOUT_MS / 2))
}

/** Listen for the job's settling before enqueueing it, then hand the result to awaitInvoicePdf. */
export function listenForRender(platform: Platform, id: string, timeoutMs: number): Promise<JobSettled | null> {
  return listenForOutcome(platform, QUEUE, id, timeoutMs)
}

/** How a waited-for invoice ended. */
type Outcome = { status: 'done'; pdf: Buffer } | { status: 'failed'; error?: InvoiceDoc['error'] }

/** The invoice's outcome once recorded, or undefined while it is not. Read without its request, which the waiter has. */
async function recorded(platform: Platform, id: string): Promise<Outcome | undefined> {
  const doc = await invoices(platform.db, id).findOne({ _id: id }, { projection: { request: 0 } })
  if (!doc) return undefined
  // A row stored before its render (an earlier version's) may still be open: not an outcome yet.
  if (doc.status === 'done') return { status: 'done', pdf: pdfBytes(doc) }
  return doc.status === 'failed' ? { status: 'failed', error: doc.error } : undefined
}

/**
 * Give up on an invoice not recorded yet: record it failed with `error` (which gives its unit
 * back) and confirm its hold. False when it was recorded meanwhile (rendered, or failed by its
 * worker): that record stands, and its reader confirms the hold.
 */
export async function giveUp(platform: Platform, rec: InvoiceRecord, error: { status: number; message: string }): Promise<boolean> {
  if (!(await recordFailed(platform.db, rec, error, platform.config.INVOICE_RETENTION_DAYS))) return false
  confirmLater(platform, rec)
  return true
}

/** The invoice is recorded: its hold is confirmed with the account's next reservation, or soon. */
function confirmLater(platform: Platform, rec: InvoiceRecord): void {
  if (rec.account_id && rec.period) holdConfirmations(platform).later(rec.account_id, rec.period, rec._id)
}

/**
 * Enqueue the render again when Redis no longer has its job and nothing recorded the invoice. A
 * worker may still be rendering the lost job (Redis restarted under it): then the invoice is
 * rendered twice and recorded once.
 */
export async function requeueIfLost(platform: Platform, payload: InvoiceRenderPayload): Promise<boolean> {
  if ((await platform.queues.queue(QUEUE).getJobState(payload.invoice_id)) !== 'unknown') return false
  if (await getInvoice(platform.db, payload.invoice_id)) return false
  await enqueueAwaited(platform, invoiceRenderContract, payload)
  logger.warn({ invoiceId: payload.invoice_id }, 'render job lost by Redis (failover or restart): enqueued again')
  return true
}

/**
 * Wait for the invoice to be recorded and answer with its PDF, or throw the error it was recorded
 * with. Either way its hold is confirmed (with the account's next reservation, or soon); a failed
 * one's unit was given back by whoever recorded it, and is given back here in case that process
 * died in between (releaseIfFailed: once, whoever calls it).
 */
export async function awaitInvoicePdf(
  platform: Platform,
  rec: InvoiceRecord,
  payload: InvoiceRenderPayload,
  timeoutMs: number,
  firstWait?: Promise<JobSettled | null>,
): Promise<Buffer> {
  const outcome = await awaitOutcome<Outcome>(platform, {
    queue: QUEUE,
    jobId: rec._id,
    timeoutMs,
    firstWait,
    fromWake: (pdf) => ({ status: 'done', pdf }),
    read: () => recorded(platform, rec._id),
    repair: async () => void (await requeueIfLost(platform, payload)),
  })
  if (outcome === undefined) {
    // Timed out: give up, unless it was recorded at the last moment (then that record answers,
    // read once more; a record that is still no outcome, which only an earlier version's open row
    // could be, is a timeout all the same).
    if (timeoutMs === 0 || (await giveUp(platform, rec, { status: 504, message: RENDER_TIMEOUT_MESSAGE }))) {
      await platform.queues.queue(QUEUE).remove(rec._id).catch(() => undefined)
      throw gatewayTimeout(RENDER_TIMEOUT_MESSAGE)
    }
    return awaitInvoicePdf(platform, rec, payload, 0)
  }
  if (outcome.status === 'done') {
    confirmLater(platform, rec)
    return outcome.pdf
  }
  // Confirmed only once the unit is surely back: if this fails too, the sweep finds the hold stale
  // and the invoice failed, gives the unit back and confirms.
  if (await releaseIfFailed(platform.db, rec._id).then(() => true, () => false)) confirmLater(platform, rec)
  const e = outcome.error ?? { status: 503, message: 'The invoice could not be rendered. Please retry.' }
  throw new HttpError(e.status, e.message)
}
