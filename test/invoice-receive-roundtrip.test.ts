// Round trip of receiving (docs/einvoice-receiving.md), property-tested: a generated
// request (lines with their own allowances and charges, document allowances and charges, a
// discount) written as ubl, xrechnung and facturx and read back gives a request that writes the very
// same XML again (what is normalised on the way is listed in the docs), with no error findings;
// the delivery date, the seller's register entry, SIREN and legal id and the buyer's legal id come
// back as they were sent. A paid amount (BT-113) is checked in BR-CO-16 and said in a finding.
// In-process: the writer and the reader, no HTTP (test/invoice-receive.test.ts covers the API).
import assert from 'node:assert/strict'
import fc from 'fast-check'
import { PDFDocument } from '@cantoo/pdf-lib'
import { renderEInvoice } from '../src/invoice/einvoice/einvoice-render.ts'
import { readEInvoice } from '../src/invoice/receive/read-einvoice.ts'
import { extractInvoiceXml } from '../src/invoice/receive/extract-facturx.ts'
import { invoiceBodySchema } from '../src/invoice/invoice-schema.ts'
import { fullRequest } from './helpers/einvoice.ts'

const RUNS = Number(process.env.FC_RUNS ?? 8)
const TODAY = '2026-11-26'

/** How an allowance or charge says why: a reason code, a text, or both (one of them is required). */
const why = (codes: string[]) =>
  fc.oneof(
    fc.constantFrom(...codes).map((reason_code) => ({ reason_code })),
    fc.constantFrom('Treuerabatt', 'Remise fidélité', 'Verpackung').map((reason) => ({ reason })),
    fc.record({ reason_code: fc.constantFrom(...codes), reason: fc.constantFrom('Frühbucher', 'Transport') }),
  )
/** An adjustment as a share of what it applies to (1–10 %), so nothing turns negative. */
const adjustmentArb = (codes: string[]) => fc.record({ percent: fc.integer({ min: 1, max: 10 }), why: why(codes) })
const ALLOWANCE = ['95', '100', '41', '66']
const CHARGE = ['FC', 'ABL', 'AAA']

const itemArb = fc.record({
  description: fc.stringMatching(/^[A-Za-z][A-Za-z0-9 äöüéß]{0,30}[A-Za-z0-9]$/),
  quantity: fc.integer({ min: 1, max: 500 }),
  unit_price: fc.integer({ min: 1, max: 10_000_000 }).map((c) => c / 100),
  tax_rate: fc.constantFrom(19, 7, 5.5),
  allowances: fc.array(adjustmentArb(ALLOWANCE), { maxLength: 2 }),
  charges: fc.array(adjustmentArb(CHARGE), { maxLength: 1 }),
})
const requestArb = fc.record({
  invoice_number: fc.stringMatching(/^[A-Z]{2}-[0-9]{1,8}$/),
  date: fc.constantFrom('2026-01-31', '2026-11-02'),
  currency: fc.constantFrom('EUR', 'USD', 'GBP'),
  document_type: fc.constantFrom('invoice', 'credit_note'),
  items: fc.array(itemArb, { minLength: 1, maxLength: 4 }),
  discount: fc.option(fc.integer({ min: 1, max: 500 }), { nil: undefined }),
  delivery_date: fc.option(fc.constantFrom('2026-01-15', '2026-10-30'), { nil: undefined }),
  locale: fc.constantFrom(undefined, 'de', 'fr'),
  register: fc.option(
    fc.record({ number: fc.constantFrom('HRB 187654 B', 'RCS Paris B 443 061 841'), court: fc.constantFrom('Amtsgericht Charlottenburg', 'Tribunal de commerce de Paris') }),
    { nil: undefined },
  ),
  /** The seller's other ids: a legal id (BT-30 then), a SIREN (a French seller then), or none. */
  sellerId: fc.constantFrom('none', 'legal_id', 'siren'),
  buyerLegalId: fc.option(fc.constantFrom('0123456789', 'HRB 999 X'), { nil: undefined }),
  /** Document allowances and charges (BG-20/21), in the first line's VAT group. */
  docAllowances: fc.array(adjustmentArb(ALLOWANCE), { maxLength: 2 }),
  docCharges: fc.array(adjustmentArb(CHARGE), { maxLength: 2 }),
})

/** `percent` of `cents` in currency units, rounded down (0 when too small: then left out). */
const share = (cents: number, percent: number) => Math.floor((cents * percent) / 100) / 100
const cents = (amount: number) => Math.round(amount * 100)

async function blankPdf(): Promise<Buffer> {
  const doc = await PDFDocument.create()
  doc.addPage()
  return Buffer.from(await doc.save())
}

/** The XML a request writes: the file itself, or the one inside the Factur-X PDF. */
async function xmlOf(req: Record<string, unknown>, pdf: Buffer): Promise<string> {
  const parsed = invoiceBodySchema.parse(req)
  const out = await renderEInvoice(parsed, { today: TODAY, pdf })
  return parsed.format === 'facturx' ? (await extractInvoiceXml(out)).xml : out.toString('utf8')
}

describe('receiving e-invoices: request → XML → read back → the same XML', () => {
  for (const format of ['ubl', 'xrechnung', 'facturx'] as const) {
    it(format, async () => {
      const pdf = await blankPdf()
      await fc.assert(
        fc.asyncProperty(requestArb, async (gen) => {
          // A discount is kept below half the lines: more is a 400 of /invoice, not this property's subject.
          const subtotal = gen.items.reduce((a, i) => a + i.quantity * i.unit_price, 0)
          const discount = gen.discount !== undefined && gen.discount <= subtotal / 2 ? gen.discount : undefined
          const { sellerId, buyerLegalId, register, docAllowances, docCharges, ...fields } = gen
          // Line adjustments as shares of the line's net; the document's as shares of the first line's.
          const items = gen.items.map((i) => {
            const net = Math.round(i.quantity * i.unit_price * 100)
            const item: Record<string, unknown> = { description: i.description, quantity: i.quantity, unit_price: i.unit_price, tax_rate: i.tax_rate }
            const allowances = i.allowances.map((a) => ({ amount: share(net, a.percent), ...a.why })).filter((a) => a.amount > 0)
            const charges = i.charges.map((c) => ({ amount: share(net, c.percent), ...c.why })).filter((c) => c.amount > 0)
            if (allowances.length) item.allowances = allowances
            if (charges.length) item.charges = charges
            return item
          })
          const first = gen.items[0]!
          const firstNet = Math.round(first.quantity * first.unit_price * 100) - ((items[0]!.allowances as { amount: number }[] | undefined) ?? []).reduce((a, x) => a + cents(x.amount), 0)
          const group = { tax_category: 'S', tax_rate: first.tax_rate }
          const allowances = docAllowances.map((a) => ({ amount: share(firstNet, a.percent), ...a.why, ...group })).filter((a) => a.amount > 0)
          const charges = docCharges.map((c) => ({ amount: share(firstNet, c.percent), ...c.why, ...group })).filter((c) => c.amount > 0)
          const base = fullRequest({
            ...fields,
            items,
            ...(allowances.length ? { allowances } : {}),
            ...(charges.length ? { charges } : {}),
            discount,
            format,
            due_date: undefined,
            tax_rate: undefined,
            preceding_invoice_number: gen.document_type === 'credit_note' ? 'RE-1' : undefined,
          })
          if (register) base.from.register = register
          if (sellerId === 'legal_id') base.from.legal_id = 'LEI-5299000J2N45DDNE4Y28'
          if (sellerId === 'siren') Object.assign(base.from, { siren: '443061841', country: 'FR', vat_id: 'FR12443061841' })
          if (buyerLegalId) base.to.legal_id = buyerLegalId
          const written = await renderEInvoice(invoiceBodySchema.parse(base), { today: TODAY, pdf })
          const read = await readEInvoice(written, format === 'facturx' ? 'pdf' : 'xml')
          assert.deepEqual(read.findings.filter((f) => f.severity === 'error'), [])
          assert.equal(read.invoice.format, format)
          assert.equal(read.invoice.invoice_number, gen.invoice_number)
          assert.deepEqual(read.invoice.items.map((i: any) => [i.description, i.quantity, i.unit_price, i.tax_rate]), gen.items.map((i) => [i.description, i.quantity, i.unit_price, i.tax_rate]))
          // Allowances and charges come back with their amounts and codes, line by line and on the document.
          const adjusted = (xs: any[] | undefined) => (xs ?? []).map((x) => [x.amount, x.reason_code])
          for (const [k, item] of items.entries()) {
            assert.deepEqual(adjusted(read.invoice.items[k].allowances), adjusted(item.allowances as any[]), `line ${k + 1} allowances`)
            assert.deepEqual(adjusted(read.invoice.items[k].charges), adjusted(item.charges as any[]), `line ${k + 1} charges`)
          }
          // A flat discount comes back as document allowances of its own (one per VAT group it is
          // spread over, code 95): the generated ones are among them, and the rest add up to it.
          const readAllowances = adjusted(read.invoice.allowances)
          const rest = [...readAllowances]
          for (const a of adjusted(allowances)) {
            const at = rest.findIndex((r) => r[0] === a[0] && r[1] === a[1])
            assert.ok(at !== -1, `document allowance ${JSON.stringify(a)} not read back: ${JSON.stringify(readAllowances)}`)
            rest.splice(at, 1)
          }
          assert.equal(cents(rest.reduce((t, r) => t + (r[0] as number), 0)), cents(discount ?? 0), `the discount: ${JSON.stringify(rest)}`)
          assert.deepEqual(adjusted(read.invoice.charges), adjusted(charges), 'document charges')
          assert.equal(read.invoice.delivery_date, gen.delivery_date)
          // French words the note without a separator ("Immatriculation : {court} {number}"): court and
          // number come apart exactly only where the number is BT-30; else the note is the same text.
          if (gen.locale !== 'fr' || sellerId === 'none') assert.deepEqual(read.invoice.from.register, register && { ...register })
          else assert.equal(Boolean(read.invoice.from.register), Boolean(register))
          assert.equal(read.invoice.from.siren, base.from.siren)
          assert.equal(read.invoice.from.legal_id, base.from.legal_id)
          assert.equal(read.invoice.to.legal_id, buyerLegalId)
          assert.equal(await xmlOf(read.invoice, pdf), await xmlOf(base, pdf))
        }),
        { numRuns: RUNS, seed: process.env.FC_SEED ? Number(process.env.FC_SEED) : undefined },
      )
    })
  }
})

describe('receiving e-invoices: a paid amount (BT-113)', () => {
  for (const format of ['ubl', 'xrechnung'] as const) {
    it(`${format}: the amount due less the paid amount passes BR-CO-16, stated as BT-113, with a resend note (not a finding); a due amount that ignores it fails`, async () => {
      const xml = (await renderEInvoice(invoiceBodySchema.parse(fullRequest({ format })), { today: TODAY })).toString('utf8')
      // Pay 100.00 in advance: UBL PrepaidAmount before PayableAmount, CII TotalPrepaidAmount before DuePayableAmount.
      const [tag, paid, due] = format === 'ubl' ? ['cbc:PayableAmount', 'cbc:PrepaidAmount', /<cbc:PayableAmount currencyID="EUR">([\d.]+)</] : ['ram:DuePayableAmount', 'ram:TotalPrepaidAmount', /<ram:DuePayableAmount>([\d.]+)</]
      const total = Number(due.exec(xml)![1])
      const attr = format === 'ubl' ? ' currencyID="EUR"' : ''
      const withPaid = (dueAmount: number) =>
        Buffer.from(xml.replace(new RegExp(`<${tag}[^>]*>[\\d.]+</${tag}>`), `<${paid}${attr}>100.00</${paid}><${tag}${attr}>${dueAmount.toFixed(2)}</${tag}>`))
      const ok = await readEInvoice(withPaid(total - 100), 'xml')
      assert.deepEqual(ok.findings.filter((f) => f.severity === 'error'), [])
      assert.equal(ok.stated.totals.BT113, '100.00')
      assert.equal(ok.stated.totals.BT115, (total - 100).toFixed(2))
      assert.ok(!ok.findings.some((f) => f.bt === 'BT-113'), JSON.stringify(ok.findings))
      for (const f of ['pdf', 'ubl', 'xrechnung', 'facturx'] as const) assert.ok(ok.resend[f].some((n) => n.bt === 'BT-113' && /100\.00/.test(n.message)), JSON.stringify(ok.resend))
      const wrong = await readEInvoice(withPaid(total), 'xml')
      assert.ok(wrong.findings.some((f) => f.rule === 'BR-CO-16' && f.severity === 'error'), JSON.stringify(wrong.findings))
    })
  }
})

describe('receiving e-invoices: an XRechnung Skonto term (BR-DE-18)', () => {
  it('keeps its final line break through write → read → write, with no BR-DE-18 finding', async () => {
    const terms = 'Zahlbar innerhalb 30 Tagen netto.\n#SKONTO#TAGE=7#PROZENT=2.00#\n'
    const req = fullRequest({ format: 'xrechnung', payment: { ...fullRequest({}).payment, terms } })
    const xml = (await renderEInvoice(invoiceBodySchema.parse(req), { today: TODAY })).toString('utf8')
    const read = await readEInvoice(Buffer.from(xml), 'xml')
    assert.equal(read.profile.rules, 'xrechnung')
    assert.equal(read.stated.payment_terms, terms)
    assert.equal(read.invoice.payment.terms, terms)
    assert.deepEqual(read.findings.filter((f) => f.rule === 'BR-DE-18' || f.severity === 'error'), [])
    assert.equal(await xmlOf(read.invoice, Buffer.alloc(0)), xml)
    // Without the final line break the read says so.
    const cut = await readEInvoice(Buffer.from(xml.replace('PROZENT=2.00#\n', 'PROZENT=2.00#').replace('PROZENT=2.00#&#10;', 'PROZENT=2.00#')), 'xml')
    assert.ok(cut.findings.some((f) => f.rule === 'BR-DE-18' && f.bt === 'BT-20'), JSON.stringify(cut.findings))
  })
})
