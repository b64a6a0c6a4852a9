// Entry of a render thread (piscina). Receives a validated request, returns the bytes of its
// output format (the PDF, a Factur-X PDF/A-3b, or UBL/XRechnung XML).
import { renderInvoiceOutput } from './render-output.ts'
import type { InvoiceRequest } from '../invoice-schema.ts'

export interface RenderTask {
  request: InvoiceRequest
  logoDataUrl?: string
  today: string
}

export default async function render(task: RenderTask): Promise<Uint8Array> {
  const pdf = await renderInvoiceOutput(task.request, { logoDataUrl: task.logoDataUrl, today: task.today })
  return new Uint8Array(pdf.buffer, pdf.byteOffset, pdf.byteLength)
}
