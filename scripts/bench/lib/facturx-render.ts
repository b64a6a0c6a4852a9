// The facturx render beside the plain PDF render of the same 20-line invoice, in this process
// (npm run bench:invoice prints both; target: facturx ≤ 2 × plain). Factur-X renders the PDF with
// embedded Noto fonts (PDF/A), then builds the CII XML and turns the PDF into PDF/A-3b.
import { renderInvoiceOutput } from '../../../src/invoice/render-output.ts'
import { invoiceBodySchema, type InvoiceRequest } from '../../../src/invoice/schema.ts'

async function msPerDoc(req: InvoiceRequest, ms: number): Promise<number> {
  for (let i = 0; i < 10; i++) await renderInvoiceOutput(req, { today: '2026-11-21' }) // warm up
  let n = 0
  const start = performance.now()
  while (performance.now() - start < ms) {
    await renderInvoiceOutput(req, { today: '2026-11-21' })
    n++
  }
  return (performance.now() - start) / n
}

export async function facturxVsPlain(plain: InvoiceRequest, ms = 5_000): Promise<{ plainMs: number; facturxMs: number; ratio: number }> {
  const facturx = invoiceBodySchema.parse({
    ...plain,
    format: 'facturx',
    currency: 'EUR',
    from: { ...plain.from, country: 'GB', vat_id: 'GB123456789' },
    to: { ...plain.to, country: 'US' },
  })
  const plainMs = await msPerDoc(plain, ms)
  const facturxMs = await msPerDoc(facturx, ms)
  return { plainMs, facturxMs, ratio: facturxMs / plainMs }
}
