// Allowances and charges (docs/einvoice.md, "Allowances and charges"): per document (BG-20/21) and
// per line (BG-27/28), in UBL, XRechnung CII and Factur-X and on the PDF. A fast-check property
// checks the written totals (BT-106…BT-115) and VAT breakdown against a computation written here
// from the rules, independently of the service's arithmetic, and xmllint validates every document;
// bad input is a 400 naming the field and its business term. Unit level: the route's own parser
// (parseOrThrow with invoiceBodySchema) and the render threads' functions.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import fc from 'fast-check'
import { XMLParser } from 'fast-xml-parser'
import { invoiceSchema } from '@e-invoice-eu/core'
import { renderEInvoice } from '../src/invoice/einvoice/einvoice-render.ts'
import { renderInvoicePdf } from '../src/invoice/pdf/thread-render-pdf.ts'
import { invoiceBodySchema } from '../src/invoice/invoice-schema.ts'
import { ALLOWANCE_CODES, CHARGE_CODES } from '../src/invoice/model/allowance-codes.ts'
import { CII_XSD, fullRequest, pdfAttachments, UBL_INVOICE_XSD, xsdValidate, refusalOf } from './helpers/einvoice.ts'
import { pdfText } from './helpers/pdf.ts'

const TODAY = '2026-11-02'

const parser = new XMLParser({ ignoreAttributes: true, removeNSPrefix: true, parseTagValue: false, isArray: (name) => ['InvoiceLine', 'TaxSubtotal', 'ApplicableTradeTax', 'IncludedSupplyChainTradeLineItem', 'AllowanceCharge', 'SpecifiedTradeAllowanceCharge'].includes(name) })
const list = (v: unknown): any[] => (Array.isArray(v) ? v : v === undefined ? [] : [v])
/** "12.34" in minor units of `exp` decimals. */
const minorOf = (s: unknown, exp: number): bigint => {
  const [w, f = ''] = String(s).split('.')
  assert.ok(f.length <= exp, `${s} has more than ${exp} decimals`)
  return BigInt(w! + f.padEnd(exp, '0'))
}

interface Read {
  bt106: bigint; bt107: bigint; bt108: bigint; bt109: bigint; bt110: bigint; bt112: bigint; bt115: bigint
  groups: string[]
  lines: bigint[]
}

/** The totals and breakdown as a receiver reads them from UBL or CII. */
function readTotals(xml: Buffer, exp: number): Read {
  const doc = parser.parse(xml.toString('utf8'))
  const m = (v: unknown) => (v === undefined ? 0n : minorOf(typeof v === 'object' ? (v as any)['#text'] : v, exp))
  if (doc.Invoice) {
    const inv = doc.Invoice
    const t = inv.LegalMonetaryTotal
    return {
      bt106: m(t.LineExtensionAmount), bt107: m(t.AllowanceTotalAmount), bt108: m(t.ChargeTotalAmount), bt109: m(t.TaxExclusiveAmount),
      bt110: m(inv.TaxTotal.TaxAmount), bt112: m(t.TaxInclusiveAmount), bt115: m(t.PayableAmount),
      groups: list(inv.TaxTotal.TaxSubtotal).map((s) => `${s.TaxCategory.ID}|${Number(s.TaxCategory.Percent ?? 0)}|${m(s.TaxableAmount)}|${m(s.TaxAmount)}`).sort(),
      lines: list(inv.InvoiceLine).map((l) => m(l.LineExtensionAmount)),
    }
  }
  const tx = doc.CrossIndustryInvoice.SupplyChainTradeTransaction
  const settlement = tx.ApplicableHeaderTradeSettlement
  const s = settlement.SpecifiedTradeSettlementHeaderMonetarySummation
  return {
    bt106: m(s.LineTotalAmount), bt107: m(s.AllowanceTotalAmount), bt108: m(s.ChargeTotalAmount), bt109: m(s.TaxBasisTotalAmount),
    bt110: m(s.TaxTotalAmount), bt112: m(s.GrandTotalAmount), bt115: m(s.DuePayableAmount),
    groups: list(settlement.ApplicableTradeTax).map((g) => `${g.CategoryCode}|${Number(g.RateApplicablePercent ?? 0)}|${m(g.BasisAmount)}|${m(g.CalculatedAmount)}`).sort(),
    lines: list(tx.IncludedSupplyChainTradeLineItem).map((l) => m(l.SpecifiedLineTradeSettlement.SpecifiedTradeSettlementLineMonetarySummation.LineTotalAmount)),
  }
}

// ---- The independent computation: integers only, from the generated numerators. ----

/** A decimal generated as num / 10^scale. */
interface Dec { num: bigint; scale: number }
const dec = (d: Dec) => Number(d.num) / 10 ** d.scale
/** round-half-up(a / b) for a ≥ 0, b > 0. */
const roundDiv = (a: bigint, b: bigint) => (2n * a + b) / (2n * b)
const toMinor = (d: Dec, exp: number) => roundDiv(d.num * 10n ** BigInt(exp), 10n ** BigInt(d.scale))

interface Vat { category: string; rate: Dec }
interface GenLine { quantity: Dec; price: Dec; vat: Vat; allowances: Dec[]; charges: Dec[] }
interface GenDoc { amount: Dec; vat: Vat; code?: string }
interface Gen { currency: 'EUR' | 'JPY'; lines: GenLine[]; discount?: Dec; allowances: GenDoc[]; charges: GenDoc[] }

type Expected = { ok: false } | ({ ok: true } & Read)

function expected(g: Gen): Expected {
  const exp = g.currency === 'JPY' ? 0 : 2
  const lines = g.lines.map((l) => {
    const gross = roundDiv(l.quantity.num * l.price.num * 10n ** BigInt(exp), 10n ** BigInt(l.quantity.scale + l.price.scale))
    return gross - l.allowances.reduce((a, x) => a + toMinor(x, exp), 0n) + l.charges.reduce((a, x) => a + toMinor(x, exp), 0n)
  })
  if (lines.some((n) => n < 0n)) return { ok: false }
  const bt106 = lines.reduce((a, b) => a + b, 0n)
  const discount = g.discount ? toMinor(g.discount, exp) : 0n
  if (discount > bt106) return { ok: false }
  const key = (v: Vat) => `${v.category}|${dec(v.rate)}`
  const groups = new Map<string, { rate: Dec; lines: bigint; adj: bigint }>()
  const at = (v: Vat) => groups.get(key(v)) ?? groups.set(key(v), { rate: v.rate, lines: 0n, adj: 0n }).get(key(v))!
  g.lines.forEach((l, i) => (at(l.vat).lines += lines[i]!))
  const docAllowances = g.allowances.reduce((a, x) => a + toMinor(x.amount, exp), 0n)
  const docCharges = g.charges.reduce((a, x) => a + toMinor(x.amount, exp), 0n)
  for (const a of g.allowances) at(a.vat).adj -= toMinor(a.amount, exp)
  for (const c of g.charges) at(c.vat).adj += toMinor(c.amount, exp)
  // The discount over the groups in proportion to their lines, largest remainder first (ties: first group).
  const entries = [...groups.entries()]
  const shares = entries.map(([, v]) => (bt106 > 0n ? (discount * v.lines) / bt106 : 0n))
  const rems = entries.map(([, v]) => (bt106 > 0n ? (discount * v.lines) % bt106 : 0n))
  let left = discount - shares.reduce((a, b) => a + b, 0n)
  for (const i of entries.map((_, i) => i).sort((a, b) => (rems[b]! > rems[a]! ? 1 : rems[b]! < rems[a]! ? -1 : a - b))) {
    if (left <= 0n || bt106 === 0n) break
    shares[i]! += 1n
    left -= 1n
  }
  let bt110 = 0n
  const read: string[] = []
  for (const [i, [k, v]] of entries.entries()) {
    const base = v.lines + v.adj - shares[i]!
    if (base < 0n) return { ok: false }
    const tax = roundDiv(base * v.rate.num, 100n * 10n ** BigInt(v.rate.scale))
    bt110 += tax
    read.push(`${k}|${base}|${tax}`)
  }
  const bt107 = discount + docAllowances
  const bt109 = bt106 - bt107 + docCharges
  return { ok: true, bt106, bt107, bt108: docCharges, bt109, bt110, bt112: bt109 + bt110, bt115: bt109 + bt110, groups: read.sort(), lines }
}

/** The request the generated invoice is sent as. */
function requestOf(g: Gen, format: string): Record<string, any> {
  const vatFields = (v: Vat) => ({ tax_category: v.category, tax_rate: dec(v.rate) })
  const body = fullRequest({
    format,
    currency: g.currency,
    discount: g.discount ? dec(g.discount) : undefined,
    tax_rate: undefined,
    tax_exemption_reason: 'Steuerfrei nach § 4 Nr. 14 UStG',
    items: g.lines.map((l, i) => ({
      description: `Line ${i + 1}`,
      quantity: dec(l.quantity),
      unit_price: dec(l.price),
      ...vatFields(l.vat),
      ...(l.allowances.length ? { allowances: l.allowances.map((a) => ({ amount: dec(a), reason_code: '95' })) } : {}),
      ...(l.charges.length ? { charges: l.charges.map((c) => ({ amount: dec(c), reason: 'Express' })) } : {}),
    })),
    allowances: g.allowances.map((a) => ({ amount: dec(a.amount), reason_code: a.code ?? '100', ...vatFields(a.vat) })),
    charges: g.charges.map((c) => ({ amount: dec(c.amount), reason_code: c.code ?? 'FC', reason: 'Versand', ...vatFields(c.vat) })),
  })
  return body
}

const decArb = (maxNum: number, maxScale: number) =>
  fc.record({ num: fc.bigInt({ min: 1n, max: BigInt(maxNum) }), scale: fc.integer({ min: 0, max: maxScale }) })
const vatArb = fc.constantFrom<Vat>(
  { category: 'S', rate: { num: 19n, scale: 0 } },
  { category: 'S', rate: { num: 7n, scale: 0 } },
  { category: 'S', rate: { num: 55n, scale: 1 } },
  { category: 'Z', rate: { num: 0n, scale: 0 } },
  { category: 'E', rate: { num: 0n, scale: 0 } },
)
const moneyArb = (max: number) => fc.record({ num: fc.bigInt({ min: 1n, max: BigInt(max) }), scale: fc.constant(2) })
const genArb: fc.Arbitrary<Gen> = fc.record({
  currency: fc.constantFrom<'EUR' | 'JPY'>('EUR', 'EUR', 'JPY'),
  lines: fc.array(
    fc.record({
      quantity: decArb(5_000, 3),
      price: decArb(2_000_000, 4),
      vat: vatArb,
      allowances: fc.array(moneyArb(50_000), { maxLength: 2 }),
      charges: fc.array(moneyArb(20_000), { maxLength: 2 }),
    }),
    { minLength: 1, maxLength: 5 },
  ),
  discount: fc.option(moneyArb(100_000), { nil: undefined }),
  allowances: fc.array(fc.record({ amount: moneyArb(100_000), vat: vatArb, code: fc.constantFrom(undefined, '95', '64') }), { maxLength: 3 }),
  charges: fc.array(fc.record({ amount: moneyArb(50_000), vat: vatArb, code: fc.constantFrom(undefined, 'PC', 'ABL') }), { maxLength: 3 }),
})

/** xmllint over many files at once: the ones it does not call valid, with its findings. */
function xmllintFailures(files: string[], xsd: string): string[] {
  if (!files.length) return []
  // Without the schemas, xsdValidate reports the skip (or fails where they are required).
  if (!existsSync(xsd)) return (xsdValidate(readFileSync(files[0]!), xsd), [])
  // xmllint says "<file> validates" on stderr for each good file, whatever its exit status.
  const stderr = spawnSync('xmllint', ['--noout', '--nonet', '--schema', xsd, ...files], { maxBuffer: 64 << 20 }).stderr.toString()
  return files.filter((f) => !stderr.includes(`${f} validates`)).map((f) => `${f}: ${stderr.split('\n').filter((l) => l.startsWith(f)).join('\n')}`)
}

describe('allowances and charges (BG-20, BG-21, BG-27, BG-28)', () => {
  it('the reason code lists are those of the e-invoice library (UNTDID 5189 subset, 7161)', () => {
    const lists = (invoiceSchema as any).$defs.codeLists
    assert.deepEqual([...ALLOWANCE_CODES], lists.UNCL5189.enum)
    assert.deepEqual([...CHARGE_CODES], lists.UNCL7161.enum)
  })

  it('property: totals BT-106…BT-115 and the VAT breakdown of ubl and xrechnung equal an independent computation; every document validates', async function () {
    this.timeout(120_000)
    const seed = Number(process.env.FC_SEED ?? Date.now() % 2 ** 31)
    const dir = mkdtempSync(join(tmpdir(), 'qw-allowances-'))
    const files: Record<'ubl' | 'xrechnung', string[]> = { ubl: [], xrechnung: [] }
    let written = 0
    let refused = 0
    await fc
      .assert(
        fc.asyncProperty(genArb, fc.constantFrom('ubl', 'xrechnung') as fc.Arbitrary<'ubl' | 'xrechnung'>, async (g, format) => {
          const want = expected(g)
          const body = requestOf(g, format)
          const message = refusalOf(body)
          if (!want.ok) {
            refused++
            assert.ok(message !== null, 'an invoice with a negative line, group or total was accepted')
            assert.match(message, /\((BT-131|BT-116)\) would be negative|discount must not exceed the subtotal/)
            return
          }
          assert.equal(message, null, `refused: ${message}`)
          const xml = await renderEInvoice(invoiceBodySchema.parse(body), { today: TODAY })
          const file = join(dir, `${written++}-${format}.xml`)
          writeFileSync(file, xml)
          files[format].push(file)
          const { ok: _, ...rest } = want
          assert.deepEqual(readTotals(xml, g.currency === 'JPY' ? 0 : 2), rest)
        }),
        { numRuns: Number(process.env.FC_RUNS ?? 60), seed },
      )
      .catch((err) => {
        throw new Error(`FC_SEED=${seed}: ${(err as Error).message}\n${((err as Error).cause as Error | undefined)?.message ?? ''}`)
      })
    const failures = [...xmllintFailures(files.ubl, UBL_INVOICE_XSD), ...xmllintFailures(files.xrechnung, CII_XSD)]
    assert.deepEqual(failures, [], `FC_SEED=${seed}: documents xmllint rejects`)
    assert.ok(written > 10 && refused > 0, `both outcomes exercised (${written} written, ${refused} refused)`)
  })

  describe('in the XML', () => {
    const body = (format: string, locale = 'de') => {
      const b = fullRequest({
        format, locale,
        allowances: [{ amount: 10, reason_code: '100', tax_rate: 19 }],
        charges: [{ amount: 4.9, reason: 'Versand', reason_code: 'FC', tax_rate: 19 }, { amount: 2, reason_code: 'PC', tax_category: 'S', tax_rate: 7 }],
      })
      b.items[0].allowances = [{ amount: 20, reason: 'Mengenrabatt', reason_code: '95' }]
      b.items[1].charges = [{ amount: 1.5, reason_code: 'ABL' }]
      return b
    }
    // Lines 1180.00 (19 %), 41.48 (7 %), 500.00 (19 %) = 1721.48; the discount 50.00 over 1680 : 41.48
    // → 48.80 and 1.20; 19 %: 1680 − 48.80 − 10 + 4.90 = 1626.10 → 308.96; 7 %: 41.48 − 1.20 + 2 = 42.28 → 2.96.
    const totals = { bt106: 172148n, bt107: 6000n, bt108: 690n, bt109: 166838n, bt110: 31192n, bt112: 198030n, bt115: 198030n }

    it('ubl: codes and reasons (a code alone gets its name in the invoice language), amounts, categories; valid UBL 2.1', async () => {
      const xml = await renderEInvoice(invoiceBodySchema.parse(body('ubl')), { today: TODAY })
      xsdValidate(xml, UBL_INVOICE_XSD)
      const read = readTotals(xml, 2)
      assert.deepEqual({ ...read, groups: undefined, lines: undefined }, { ...totals, groups: undefined, lines: undefined })
      assert.deepEqual(read.groups, ['S|19|162610|30896', 'S|7|4228|296'])
      const inv = parser.parse(xml.toString('utf8')).Invoice
      const doc = list(inv.AllowanceCharge).map((a) => [a.ChargeIndicator, a.AllowanceChargeReasonCode, a.AllowanceChargeReason, a.Amount, a.TaxCategory.ID, a.TaxCategory.Percent])
      assert.deepEqual(doc, [
        ['false', '95', 'Rabatt', '48.80', 'S', '19'],
        ['false', '95', 'Rabatt', '1.20', 'S', '7'],
        ['false', '100', 'Sonderrabatt', '10.00', 'S', '19'],
        ['true', 'FC', 'Versand', '4.90', 'S', '19'],
        ['true', 'PC', 'Verpackung', '2.00', 'S', '7'],
      ])
      const lineAc = list(inv.InvoiceLine).map((l) => list(l.AllowanceCharge).map((a) => [a.ChargeIndicator, a.AllowanceChargeReasonCode, a.AllowanceChargeReason, a.Amount, a.TaxCategory]))
      assert.deepEqual(lineAc, [[['false', '95', 'Mengenrabatt', '20.00', undefined]], [['true', 'ABL', 'Zusätzliche Verpackung', '1.50', undefined]], []])
    })

    it('xrechnung and facturx: the same in CII (line allowances in the line settlement); valid CII D16B', async () => {
      const x = await renderEInvoice(invoiceBodySchema.parse(body('xrechnung')), { today: TODAY })
      const req = invoiceBodySchema.parse(body('facturx'))
      const pdf = await renderInvoicePdf(req, { today: TODAY, embedFonts: true })
      const f = pdfAttachments(await renderEInvoice(req, { today: TODAY, pdf })).get('factur-x.xml')!
      for (const xml of [x, f]) {
        xsdValidate(xml, CII_XSD)
        const read = readTotals(xml, 2)
        assert.deepEqual(read.groups, ['S|19|162610|30896', 'S|7|4228|296'])
        assert.deepEqual(read.lines, [118000n, 4148n, 50000n])
        assert.equal(read.bt108, totals.bt108)
        assert.equal(read.bt115, totals.bt115)
        const tx = parser.parse(xml.toString('utf8')).CrossIndustryInvoice.SupplyChainTradeTransaction
        const line1 = list(tx.IncludedSupplyChainTradeLineItem)[0].SpecifiedLineTradeSettlement.SpecifiedTradeAllowanceCharge[0]
        assert.deepEqual([line1.ChargeIndicator.Indicator, line1.ReasonCode, line1.Reason, String(line1.ActualAmount['#text'] ?? line1.ActualAmount)], ['false', '95', 'Mengenrabatt', '20.00'])
        const charges = tx.ApplicableHeaderTradeSettlement.SpecifiedTradeAllowanceCharge.filter((a: any) => a.ChargeIndicator.Indicator === 'true')
        assert.deepEqual(charges.map((c: any) => [c.ReasonCode, c.Reason, c.CategoryTradeTax.CategoryCode, c.CategoryTradeTax.RateApplicablePercent]), [['FC', 'Versand', 'S', '19'], ['PC', 'Verpackung', 'S', '7']])
      }
    })

    it('the flat discount is a document-level allowance with code 95 and its reason in the invoice language (English outside de and fr)', async () => {
      for (const [locale, reason] of [['de', 'Rabatt'], ['fr', 'Remise'], ['en', 'Discount'], ['es', 'Discount']] as const) {
        const xml = await renderEInvoice(invoiceBodySchema.parse(fullRequest({ format: 'ubl', locale })), { today: TODAY })
        const reasons = list(parser.parse(xml.toString('utf8')).Invoice.AllowanceCharge).map((a) => [a.AllowanceChargeReasonCode, a.AllowanceChargeReason])
        assert.deepEqual(reasons, [['95', reason], ['95', reason]], locale)
      }
    })
  })

  it('on the PDF: line adjustments under their line, document-level ones with their VAT rate, exact totals', async () => {
    const b = fullRequest({
      locale: 'de',
      allowances: [{ amount: 10, reason_code: '100', tax_rate: 19 }],
      charges: [{ amount: 4.9, reason: 'Versand', reason_code: 'FC', tax_rate: 19 }, { amount: 2, reason_code: 'PC', tax_category: 'S', tax_rate: 7 }],
    })
    b.items[0].allowances = [{ amount: 20, reason: 'Mengenrabatt', reason_code: '95' }]
    b.items[1].charges = [{ amount: 1.5, reason_code: 'ABL' }]
    const text = pdfText(await renderInvoicePdf(invoiceBodySchema.parse(b), { today: TODAY })).replace(/[ \t\u00a0\u202f]+/g, ' ')
    for (const s of [
      'Consulting 10 120,00 € 19% 1.180,00 €', 'Mengenrabatt: -20,00 €', 'Zusätzliche Verpackung: +1,50 €', 'Book 2 19,99 € 7% 41,48 €',
      'Zwischensumme 1.721,48 €', 'Rabatt -50,00 €', 'Sonderrabatt (USt. 19%) -10,00 €', 'Versand (USt. 19%) 4,90 €', 'Verpackung (USt. 7%) 2,00 €',
      'USt. 19 % auf 1.626,10 € 308,96 €', 'USt. 7 % auf 42,28 € 2,96 €', 'Gesamtbetrag 1.980,30 €',
    ]) assert.ok(text.includes(s), `missing "${s}" in\n${text}`)
  })

  describe('bad input is a 400 naming the field and its business term', () => {
    const cases: [string, (b: Record<string, any>) => void, string][] = [
      ['an unknown allowance reason code', (b) => (b.allowances = [{ amount: 1, reason_code: 'FC', tax_rate: 19 }]), 'allowances[0].reason_code (BT-98) must be an UNTDID 5189 allowance reason code such as 95 (discount)'],
      ['an unknown charge reason code', (b) => (b.charges = [{ amount: 1, reason_code: '95', tax_rate: 19 }]), 'charges[0].reason_code (BT-105) must be an UNTDID 7161 charge reason code such as FC (freight)'],
      ['an unknown line charge reason code', (b) => (b.items[0].charges = [{ amount: 1, reason_code: 'XYZ' }]), 'items[0].charges[0].reason_code (BT-145) must be an UNTDID 7161 charge reason code such as FC (freight)'],
      ['a negative document allowance', (b) => (b.allowances = [{ amount: -5, reason: 'x', tax_rate: 19 }]), 'allowances[0].amount (BT-92) must be > 0 (an allowance is written as a positive amount)'],
      ['a negative line allowance', (b) => (b.items[1].allowances = [{ amount: -1, reason: 'x' }]), 'items[1].allowances[0].amount (BT-136) must be > 0 (an allowance is written as a positive amount)'],
      ['an amount that is not a number', (b) => (b.charges = [{ amount: '4.90', reason: 'x', tax_rate: 19 }]), 'charges[0].amount (BT-99) must be a number'],
      ['a document charge without category or rate', (b) => (b.charges = [{ amount: 4.9, reason: 'Versand' }]), 'charges[0].tax_category (BT-102) is required, or charges[0].tax_rate (BT-103) for category S or Z (BR-37)'],
      ['a document allowance without category or rate', (b) => (b.allowances = [{ amount: 4.9, reason: 'Bonus' }]), 'allowances[0].tax_category (BT-95) is required, or allowances[0].tax_rate (BT-96) for category S or Z (BR-32)'],
      ['a document charge without reason or code', (b) => (b.charges = [{ amount: 4.9, tax_rate: 19 }]), 'charges[0].reason (BT-104) or charges[0].reason_code (BT-105) is required (BR-CO-22)'],
      ['a line allowance without reason or code', (b) => (b.items[0].allowances = [{ amount: 4.9 }]), 'items[0].allowances[0].reason (BT-139) or items[0].allowances[0].reason_code (BT-140) is required (BR-CO-23)'],
      ['category S at rate 0', (b) => (b.charges = [{ amount: 1, reason: 'x', tax_category: 'S', tax_rate: 0 }]), 'charges[0].tax_rate (BT-103) must be > 0 for tax category S (BR-S-07)'],
      ['category E with a rate', (b) => (b.allowances = [{ amount: 1, reason: 'x', tax_category: 'E', tax_rate: 7 }]), 'allowances[0].tax_rate (BT-96) must be 0 for tax category E (BR-E-06)'],
      ['an unknown category', (b) => (b.allowances = [{ amount: 1, reason: 'x', tax_category: 'X' }]), 'allowances[0].tax_category (BT-95) must be one of: S, Z, E, AE, K, G, O'],
      ['line allowances larger than the line', (b) => (b.items[1].allowances = [{ amount: 30, reason: 'x' }, { amount: 10, reason: 'y' }]), "items[1].allowances exceed the line's amount plus its charges: its net amount (BT-131) would be negative"],
      ['allowances larger than their VAT group', (b) => (b.allowances = [{ amount: 50, reason: 'x', tax_rate: 7 }]), 'allowances exceed the lines and charges in tax category S at 7%: its taxable amount (BT-116) would be negative'],
      ['an allowance in a VAT group without lines', (b) => (b.allowances = [{ amount: 1, reason: 'x', tax_category: 'Z' }]), 'allowances exceed the lines and charges in tax category Z at 0%: its taxable amount (BT-116) would be negative'],
    ]
    for (const [what, change, message] of cases) {
      it(what, () => {
        for (const format of ['pdf', 'ubl']) {
          const b = fullRequest({ format })
          change(b)
          assert.equal(refusalOf(b), message, format)
        }
      })
    }

    it('a charge may be the only member of its VAT group (shipping at 19 % on 7 % goods)', async () => {
      const b = fullRequest({ format: 'ubl', discount: undefined, items: [{ description: 'Book', quantity: 1, unit_price: 10, tax_rate: 7 }], tax_rate: undefined, charges: [{ amount: 5, reason_code: 'FC', tax_rate: 19 }] })
      assert.equal(refusalOf(b), null)
      const xml = await renderEInvoice(invoiceBodySchema.parse(b), { today: TODAY })
      xsdValidate(xml, UBL_INVOICE_XSD)
      assert.deepEqual(readTotals(xml, 2).groups, ['S|19|500|95', 'S|7|1000|70'])
      assert.equal(readTotals(xml, 2).bt115, 1665n)
    })
  })
})
