// The facturx render beside the plain PDF render of the same 20-line invoice, in this process
// (npm run bench:invoice prints both; target: facturx ≤ 2 × plain). Factur-X renders the PDF with
// embedded Noto fonts (PDF/A), then builds the CII XML and turns the PDF into PDF/A-3b.
// The two are timed in alternating rounds, so that both see the same machine (a quiet 2-core box
// still drifts by 20 % over a few seconds, which made back-to-back runs disagree by 0.5 ×);
// the figures are medians of the rounds.
import { renderInvoiceOutput } from '../../../src/invoice/pdf/thread-render-output.ts'
import { invoiceBodySchema, type InvoiceRequest } from '../../../src/invoice/invoice-schema.ts'

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!

type Variant = (req: InvoiceRequest, n: number) => InvoiceRequest

async function round(req: InvoiceRequest, docs: number, vary?: Variant): Promise<number> {
  const reqs = Array.from({ length: docs }, (_, i) => (vary ? vary(req, i) : req))
  const start = performance.now()
  for (const r of reqs) await renderInvoiceOutput(r, { today: '2026-11-21' })
  return (performance.now() - start) / docs
}

// Every document different: new words in each line's description (from 50,000 made-up words, so
// few repeat between documents), new quantities and prices. Text shaping is cached per word
// across documents (src/invoice/pdf/patches/font-cache.ts); this shows the cost when the words are new.
let seed = 1
const rand = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31)
const word = () => Array.from({ length: 4 + Math.floor(rand() * 6) }, () => String.fromCharCode(97 + Math.floor(rand() * 26))).join('')
export const varied: Variant = (req) => ({
  ...req,
  invoice_number: `V-${Math.floor(rand() * 1e9)}`,
  items: req.items.map((it) => ({ ...it, description: `${word()} ${word()} ${word()}`, quantity: 1 + Math.floor(rand() * 20), unit_price: Math.round(rand() * 1e6) / 100 })),
})

export async function facturxVsPlain(plain: InvoiceRequest, ms = 10_000, vary?: Variant): Promise<{ plainMs: number; facturxMs: number; ratio: number }> {
  const facturx = invoiceBodySchema.parse({
    ...plain,
    format: 'facturx',
    currency: 'EUR',
    from: { ...plain.from, country: 'GB', vat_id: 'GB123456789' },
    to: { ...plain.to, country: 'US' },
  })
  await round(plain, 20) // warm up (JIT, fonts)
  await round(facturx, 20)
  const plains: number[] = []
  const facturxs: number[] = []
  const ratios: number[] = []
  const start = performance.now()
  while (performance.now() - start < ms) {
    const p = await round(plain, 10, vary)
    const f = await round(facturx, 10, vary)
    plains.push(p)
    facturxs.push(f)
    ratios.push(f / p)
  }
  return { plainMs: median(plains), facturxMs: median(facturxs), ratio: median(ratios) }
}
