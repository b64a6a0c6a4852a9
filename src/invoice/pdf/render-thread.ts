// Entry of a render thread (piscina). Receives a validated request, returns the bytes of its
// output format (the PDF, a Factur-X PDF/A-3b, or UBL/XRechnung XML).
import { loadEInvoice, renderInvoiceOutput } from './render-output.ts'
import type { InvoiceRequest } from '../invoice-schema.ts'

export interface RenderTask {
  request: InvoiceRequest
  logoDataUrl?: string
  today: string
}

/** Loads the e-invoice libraries into a thread ahead of its first e-invoice; renders nothing. */
export interface WarmEInvoiceTask {
  warm: 'einvoice'
}

export default async function render(task: RenderTask | WarmEInvoiceTask): Promise<Uint8Array> {
  if ('warm' in task) {
    await loadEInvoice()
    return new Uint8Array(0)
  }
  const pdf = await renderInvoiceOutput(task.request, { logoDataUrl: task.logoDataUrl, today: task.today })
  return new Uint8Array(pdf.buffer, pdf.byteOffset, pdf.byteLength)
}
