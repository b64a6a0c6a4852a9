// One rendered invoice in the request's output format: the plain PDF (default), Factur-X (the
// same PDF with every font embedded, turned into PDF/A-3b with the CII XML inside), or UBL /
// XRechnung XML. Runs inside the render threads.
import type { BuildOptions } from './document.ts'
import { renderEInvoice } from '../einvoice/einvoice-render.ts'
import { renderInvoicePdf } from './render.ts'
import type { InvoiceRequest } from '../invoice-schema.ts'

export async function renderInvoiceOutput(req: InvoiceRequest, opts: BuildOptions): Promise<Buffer> {
  switch (req.format ?? 'pdf') {
    case 'pdf':
      return renderInvoicePdf(req, opts)
    case 'facturx':
      return renderEInvoice(req, { today: opts.today, pdf: await renderInvoicePdf(req, { ...opts, embedFonts: true }) })
    default:
      return renderEInvoice(req, { today: opts.today })
  }
}
