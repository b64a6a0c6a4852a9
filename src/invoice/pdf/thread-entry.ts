// Entry of a render thread (piscina; started by pool-render-threads.ts). Receives a validated
// request, returns the bytes of its output format (the PDF, a Factur-X PDF/A-3b, or UBL/XRechnung
// XML). It checks and installs the pdfmake/PDFKit patches as it starts (patches/README.md).
import { move } from 'piscina'
import { loadEInvoice, renderInvoiceOutput } from './thread-render-output.ts'
import { installPatches } from './patches/install-patches.ts'
import type { InvoiceRequest } from '../invoice-schema.ts'

// The patches are checked and installed as the thread starts. A failed check (a patched method
// gone in an upgrade) is thrown by every task, not here: piscina swallows an error thrown while it
// loads this file and reports its own fallback's instead ("Unknown file extension .ts").
const patchFailure = (() => {
  try {
    installPatches()
    return undefined
  } catch (err) {
    return err as Error
  }
})()

export interface RenderTask {
  request: InvoiceRequest
  logoDataUrl?: string
  today: string
}

/** Loads the e-invoice libraries into a thread ahead of its first e-invoice; renders nothing. */
export interface WarmEInvoiceTask {
  warm: 'einvoice'
}

export default async function render(task: RenderTask | WarmEInvoiceTask): Promise<Uint8Array | ArrayBufferView> {
  if (patchFailure) throw patchFailure
  if ('warm' in task) {
    await loadEInvoice()
    return new Uint8Array(0)
  }
  const pdf = await renderInvoiceOutput(task.request, { logoDataUrl: task.logoDataUrl, today: task.today })
  const bytes = new Uint8Array(pdf.buffer, pdf.byteOffset, pdf.byteLength)
  // A PDF that owns its whole memory is handed over, not copied (a 1,000-line PDF is ~120 KB). A
  // small output may sit in Node's shared Buffer pool: that is copied.
  return pdf.byteOffset === 0 && pdf.byteLength === pdf.buffer.byteLength ? (move(bytes) as Uint8Array) : bytes
}
