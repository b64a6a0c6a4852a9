// Ingress side of a render: wait (bounded) for the job, then read the outcome from MongoDB, the
// source of truth. Events only wake the waiter; a lost event costs at most one poll interval.
import type { Platform } from '../platform/platform.ts'
import { QueueName } from '../platform/queue-names.ts'
import { HttpError } from '../platform/http/errors.ts'
import { getInvoice, markFailed, pdfBytes } from './store.ts'

const POLL_MS = 1_000

export const RENDER_TIMEOUT_MESSAGE = 'Invoice rendering timed out. Please retry; this request was not counted.'

/** Listen for the job's settling before enqueueing it, then hand the result to awaitInvoicePdf. */
export function listenForRender(platform: Platform, id: string, timeoutMs: number): Promise<unknown> {
  return platform.queues.nextSettled(QueueName.InvoiceRender, id, Math.min(timeoutMs, POLL_MS))
}

/**
 * `firstWait` (from listenForRender, made before the enqueue) saves reading a document that is
 * certainly still queued: on the latency path that read competed with the worker's own.
 */
export async function awaitInvoicePdf(platform: Platform, id: string, timeoutMs: number, firstWait?: Promise<unknown>): Promise<Buffer> {
  const deadline = Date.now() + timeoutMs
  if (firstWait) await firstWait
  for (;;) {
    // Listen before reading, so a job that settles between the read and the wait still wakes us
    // (otherwise a fast render could cost a whole poll interval).
    const left = deadline - Date.now()
    const settled = left > 0 ? platform.queues.nextSettled(QueueName.InvoiceRender, id, Math.min(left, POLL_MS)) : null
    const doc = await getInvoice(platform.db, id)
    if (doc?.status === 'done') return pdfBytes(doc)
    if (!doc || doc.status === 'failed') {
      const e = doc?.error ?? { status: 503, message: 'The invoice could not be rendered. Please retry.' }
      throw new HttpError(e.status, e.message)
    }
    if (!settled) break
    await settled
  }
  // Timed out: fail it (unless it finished at the last moment) so the quota unit comes back and a
  // late render is not stored.
  if (await markFailed(platform.db, id, { status: 504, message: RENDER_TIMEOUT_MESSAGE })) {
    await platform.queues.queue(QueueName.InvoiceRender).remove(id).catch(() => undefined)
    throw new HttpError(504, RENDER_TIMEOUT_MESSAGE)
  }
  return awaitInvoicePdf(platform, id, 0)
}
