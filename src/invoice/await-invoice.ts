// Ingress side of a render: wait (bounded) for the job, then read the outcome from MongoDB, the
// source of truth (platform/queue/await-outcome.ts). While it waits, the waiter puts the job back if
// Redis lost it (failover, restart without data): same job id, and the job reads the stored
// request, so an invoice is stored and charged once whatever happens. A render that times out is
// failed, so its quota unit comes back and a late render is not stored.
import { admitToQueue } from '../platform/queue/admission.ts'
import { awaitOutcome, listenForOutcome } from '../platform/queue/await-outcome.ts'
import { HttpError, gatewayTimeout } from '../platform/http/errors.ts'
import { enqueueAwaited } from '../platform/queue/job.ts'
import { logger } from '../platform/logger.ts'
import { clock } from '../platform/clock.ts'
import type { Platform } from '../platform/platform.ts'
import { invoiceRenderContract } from './job-contracts.ts'
import { getInvoice, invoices, markFailed, OPEN, pdfBytes, type InvoiceDoc } from './store/invoice-store.ts'

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
export function listenForRender(platform: Platform, id: string, timeoutMs: number): Promise<unknown> {
  return listenForOutcome(platform, QUEUE, id, timeoutMs)
}

/**
 * The invoice once it is no longer queued or rendering (null when it is gone). Read without its
 * request, which the waiter has: no need to transfer and decode it again (a 1,000-line request is
 * ~80 KB).
 */
async function settledInvoice(platform: Platform, id: string): Promise<Omit<InvoiceDoc, 'request'> | null | undefined> {
  const doc = await invoices(platform.db, id).findOne({ _id: id }, { projection: { request: 0 } })
  return doc?.status === 'done' || doc?.status === 'failed' || !doc ? doc : undefined
}

/**
 * Enqueue the render again when Redis no longer has its job while MongoDB says it is still to do.
 * A row marked 'rendering' is left alone for two lock periods: the worker that marked it may still
 * be rendering (Redis restarted under it) and will store it; after that, it died with the job.
 */
export async function requeueIfLost(platform: Platform, id: string): Promise<boolean> {
  const doc = await getInvoice(platform.db, id)
  if (!doc || !OPEN.includes(doc.status)) return false
  if (doc.status === 'rendering' && clock.nowMs() - doc.updated_at.getTime() < 2 * platform.config.JOB_LOCK_MS) return false
  if ((await platform.queues.queue(QUEUE).getJobState(id)) !== 'unknown') return false
  // Without the request: the job reads it back and skips an invoice that was settled meanwhile.
  await enqueueAwaited(platform, invoiceRenderContract, { invoice_id: id })
  logger.warn({ invoiceId: id }, 'render job lost by Redis (failover or restart): enqueued again')
  return true
}

export async function awaitInvoicePdf(platform: Platform, id: string, timeoutMs: number, firstWait?: Promise<unknown>): Promise<Buffer> {
  const doc = await awaitOutcome(platform, {
    queue: QUEUE,
    jobId: id,
    timeoutMs,
    firstWait,
    read: () => settledInvoice(platform, id),
    repair: async () => void (await requeueIfLost(platform, id)),
  })
  if (doc?.status === 'done') return pdfBytes(doc)
  if (doc !== undefined) {
    const e = doc?.error ?? { status: 503, message: 'The invoice could not be rendered. Please retry.' }
    throw new HttpError(e.status, e.message)
  }
  // Timed out: fail it, unless it finished at the last moment (then read it once more).
  if (await markFailed(platform.db, id, { status: 504, message: RENDER_TIMEOUT_MESSAGE })) {
    await platform.queues.queue(QUEUE).remove(id).catch(() => undefined)
    throw gatewayTimeout(RENDER_TIMEOUT_MESSAGE)
  }
  return awaitInvoicePdf(platform, id, 0)
}
