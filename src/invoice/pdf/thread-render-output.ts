// One rendered invoice in the request's output format: the plain PDF (default), Factur-X (the
// same PDF with every font embedded, turned into PDF/A-3b with the CII XML inside), or UBL /
// XRechnung XML. Runs inside the render threads (thread-entry.ts).
import { createRequire } from 'node:module'
import type { BuildOptions } from './document.ts'
import { renderInvoicePdf } from './thread-render-pdf.ts'
import type { InvoiceRequest } from '../invoice-schema.ts'

// The e-invoice libraries cost a render thread ~1 s of CPU to load: a thread loads them with its
// first e-invoice (or when the worker warms them, after the plain PDF path is ready), not at start,
// where they competed with the first invoices (docs/operations.md, "Starting").
// Loaded through require: a render thread runs under tsx's CommonJS hooks (a thread does not get
// its ES module loader), where a dynamic import() of a .ts file fails.
const requireHere = createRequire(import.meta.url)
let einvoice: typeof import('../einvoice/einvoice-render.ts') | undefined
export const loadEInvoice = async () => (einvoice ??= requireHere('../einvoice/einvoice-render.ts') as typeof import('../einvoice/einvoice-render.ts'))

export async function renderInvoiceOutput(req: InvoiceRequest, opts: BuildOptions): Promise<Buffer> {
  switch (req.format ?? 'pdf') {
    case 'pdf':
      return renderInvoicePdf(req, opts)
    case 'facturx': {
      const { renderEInvoice } = await loadEInvoice()
      return renderEInvoice(req, { today: opts.today, pdf: await renderInvoicePdf(req, { ...opts, embedFonts: true }) })
    }
    default:
      return (await loadEInvoice()).renderEInvoice(req, { today: opts.today })
  }
}
