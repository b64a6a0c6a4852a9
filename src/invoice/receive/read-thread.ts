// Entry of the thread a received e-invoice is read in (read-pool.ts): parsing a hostile 10 MB
// document takes seconds of CPU, which on the API's event loop would stall every other request.
// Errors cross back as data: a thread's thrown error loses its status and fields on the way.
import { HttpError } from '../../platform/http/errors.ts'
import { readEInvoice, type ReadResult } from './read-einvoice.ts'
import { ReadDeadline } from './read-deadline.ts'
import { renderReceivedPdf } from './received-pdf.ts'
import type { InvoiceLocale } from '../model/einvoice-schema.ts'

export interface ReadTask {
  body: Uint8Array
  kind: 'xml' | 'pdf'
  deadlineMs: number
  /** Also render the readable PDF of what was read (?output=pdf), in this locale. */
  pdf?: { locale?: InvoiceLocale }
}

export type ReadAnswer =
  | { ok: ReadResult; pdf?: Uint8Array }
  | { error: { status: number; message: string; headers: Record<string, string>; extra: Record<string, unknown> } }

export default async function read(task: ReadTask): Promise<ReadAnswer> {
  const body = Buffer.from(task.body.buffer, task.body.byteOffset, task.body.byteLength)
  try {
    const deadline = new ReadDeadline(task.deadlineMs)
    const ok = await readEInvoice(body, task.kind, deadline)
    if (!task.pdf) return { ok }
    deadline.check('before rendering the readable PDF')
    const pdf = await renderReceivedPdf(ok, task.pdf.locale)
    return { ok, pdf: new Uint8Array(pdf.buffer, pdf.byteOffset, pdf.byteLength) }
  } catch (err) {
    if (err instanceof HttpError) return { error: { status: err.status, message: err.message, headers: err.headers, extra: err.extra } }
    throw err
  }
}
