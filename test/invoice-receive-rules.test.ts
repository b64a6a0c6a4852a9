// Reading e-invoices other software wrote (docs/einvoice-receiving.md), on small
// hand-made UBL documents: judged by the rules they declare (EN 16931 core; XRechnung only when
// declared), this service's writing rules only under `resend`; amounts exactly as stated (a return
// line of −109.98, a line net amount other than quantity × price, BT-113 and BT-114) and printed
// so by the readable PDF; the calculation rules on the stated values, always, with both values;
// entities decoded, undeclared ones refused; clean messages; nesting and names the parser refuses
// are a 400 (fast-check over element names and depths).
import assert from 'node:assert/strict'
import fc from 'fast-check'
import { readEInvoice } from '../src/invoice/receive/read-einvoice.ts'
import { renderReceivedPdf } from '../src/invoice/receive/received-pdf.ts'
import { HttpError } from '../src/platform/http/errors.ts'
import { pdfText } from './helpers/pdf.ts'

const RUNS = Number(process.env.FC_RUNS ?? 8)
const SEED = process.env.FC_SEED ? Number(process.env.FC_SEED) : undefined

interface Doc {
  spec?: string
  currency?: string
  seller?: string
  sellerCountry?: string
  buyerCountry?: string
  buyerReference?: string
  lines?: string
  allowances?: string
  tax?: string
  totals?: Partial<Record<'BT106' | 'BT107' | 'BT109' | 'BT110' | 'BT112' | 'BT113' | 'BT114' | 'BT115', string>>
  payment?: string
}

const line = (id: string, qty: string, price: string, net: string, cat = 'S', rate: string | null = '19') => `
  <cac:InvoiceLine><cbc:ID>${id}</cbc:ID><cbc:InvoicedQuantity unitCode="C62">${qty}</cbc:InvoicedQuantity>
    <cbc:LineExtensionAmount currencyID="EUR">${net}</cbc:LineExtensionAmount>
    <cac:Item><cbc:Name>Item ${id}</cbc:Name><cac:ClassifiedTaxCategory><cbc:ID>${cat}</cbc:ID>${rate === null ? '' : `<cbc:Percent>${rate}</cbc:Percent>`}<cac:TaxScheme><cbc:ID>VAT</cbc:ID></cac:TaxScheme></cac:ClassifiedTaxCategory></cac:Item>
    <cac:Price><cbc:PriceAmount currencyID="EUR">${price}</cbc:PriceAmount></cac:Price></cac:InvoiceLine>`

const subtotal = (cat: string, rate: string | null, taxable: string, tax: string, exemption = '') =>
  `<cac:TaxSubtotal><cbc:TaxableAmount currencyID="EUR">${taxable}</cbc:TaxableAmount><cbc:TaxAmount currencyID="EUR">${tax}</cbc:TaxAmount><cac:TaxCategory><cbc:ID>${cat}</cbc:ID>${rate === null ? '' : `<cbc:Percent>${rate}</cbc:Percent>`}${exemption}<cac:TaxScheme><cbc:ID>VAT</cbc:ID></cac:TaxScheme></cac:TaxCategory></cac:TaxSubtotal>`

/**
 * A plain EN 16931 UBL invoice (no Peppol ids, no buyer reference): a line 10 × 20.00 stated as
 * 190.00 (a discount the sender folded into the line: EN 16931 lets BT-131 differ from quantity ×
 * price), a return line −2 × 54.99 = −109.98, a zero allowance, 19 % VAT, 3.00 paid in advance
 * and a rounding of +0.01.
 */
function doc(d: Doc = {}): string {
  const t = { BT106: '80.02', BT107: '0.00', BT109: '80.02', BT110: '15.20', BT112: '95.22', BT113: '3.00', BT114: '0.01', BT115: '92.23', ...d.totals }
  const amt = (tag: string, v: string | undefined) => (v === undefined ? '' : `<cbc:${tag} currencyID="EUR">${v}</cbc:${tag}>`)
  return `<?xml version="1.0" encoding="UTF-8"?>
<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2" xmlns:cac="urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2" xmlns:cbc="urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2">
  <cbc:CustomizationID>${d.spec ?? 'urn:cen.eu:en16931:2017'}</cbc:CustomizationID>
  <cbc:ID>R-1</cbc:ID><cbc:IssueDate>2026-03-01</cbc:IssueDate><cbc:DueDate>2026-03-31</cbc:DueDate><cbc:InvoiceTypeCode>380</cbc:InvoiceTypeCode>
  <cbc:DocumentCurrencyCode>${d.currency ?? 'EUR'}</cbc:DocumentCurrencyCode>${d.buyerReference ? `<cbc:BuyerReference>${d.buyerReference}</cbc:BuyerReference>` : ''}
  <cac:AccountingSupplierParty><cac:Party><cac:PostalAddress><cbc:StreetName>Hauptstr. 1</cbc:StreetName><cbc:CityName>Berlin</cbc:CityName><cbc:PostalZone>10115</cbc:PostalZone><cac:Country><cbc:IdentificationCode>${d.sellerCountry ?? 'DE'}</cbc:IdentificationCode></cac:Country></cac:PostalAddress>
    <cac:PartyTaxScheme><cbc:CompanyID>${d.sellerCountry === 'IT' ? 'IT12345678901' : 'DE123456789'}</cbc:CompanyID><cac:TaxScheme><cbc:ID>VAT</cbc:ID></cac:TaxScheme></cac:PartyTaxScheme>
    <cac:PartyLegalEntity><cbc:RegistrationName>${d.seller ?? 'Seller GmbH'}</cbc:RegistrationName></cac:PartyLegalEntity></cac:Party></cac:AccountingSupplierParty>
  <cac:AccountingCustomerParty><cac:Party><cac:PostalAddress><cbc:CityName>Paris</cbc:CityName><cbc:PostalZone>75002</cbc:PostalZone><cac:Country><cbc:IdentificationCode>${d.buyerCountry ?? 'FR'}</cbc:IdentificationCode></cac:Country></cac:PostalAddress>
    <cac:PartyLegalEntity><cbc:RegistrationName>Buyer SARL</cbc:RegistrationName></cac:PartyLegalEntity></cac:Party></cac:AccountingCustomerParty>
  ${d.payment ?? '<cac:PaymentMeans><cbc:PaymentMeansCode>58</cbc:PaymentMeansCode><cac:PayeeFinancialAccount><cbc:ID>DE89370400440532013000</cbc:ID></cac:PayeeFinancialAccount></cac:PaymentMeans>'}
  ${d.allowances ?? '<cac:AllowanceCharge><cbc:ChargeIndicator>false</cbc:ChargeIndicator><cbc:AllowanceChargeReasonCode>95</cbc:AllowanceChargeReasonCode><cbc:Amount currencyID="EUR">0.00</cbc:Amount><cac:TaxCategory><cbc:ID>S</cbc:ID><cbc:Percent>19</cbc:Percent><cac:TaxScheme><cbc:ID>VAT</cbc:ID></cac:TaxScheme></cac:TaxCategory></cac:AllowanceCharge>'}
  <cac:TaxTotal><cbc:TaxAmount currencyID="EUR">${t.BT110}</cbc:TaxAmount>${d.tax ?? subtotal('S', '19', '80.02', '15.20')}</cac:TaxTotal>
  <cac:LegalMonetaryTotal>${amt('LineExtensionAmount', t.BT106)}${amt('TaxExclusiveAmount', t.BT109)}${amt('TaxInclusiveAmount', t.BT112)}${amt('AllowanceTotalAmount', t.BT107)}${amt('PrepaidAmount', t.BT113)}${amt('PayableRoundingAmount', t.BT114)}${amt('PayableAmount', t.BT115)}</cac:LegalMonetaryTotal>
  ${d.lines ?? line('1', '10', '20.00', '190.00') + line('2', '-2', '54.99', '-109.98')}
</Invoice>`
}

const read = (xml: string) => readEInvoice(Buffer.from(xml), 'xml')
const errors = (r: Awaited<ReturnType<typeof read>>) => r.findings.filter((f) => f.severity === 'error')

async function refusal(xml: string): Promise<HttpError> {
  try {
    await read(xml)
  } catch (err) {
    if (err instanceof HttpError) return err
    throw err
  }
  throw new Error('expected a refusal')
}

describe('receiving e-invoices: judged by the rules they declare, amounts as stated', () => {
  it('a plain EN 16931 UBL with a return line, a zero allowance, BT-131 ≠ quantity × price, BT-113 and BT-114: 0 errors, every amount as stated', async () => {
    const r = await read(doc())
    assert.deepEqual(errors(r), [], JSON.stringify(r.findings))
    assert.deepEqual(r.profile, { id: 'urn:cen.eu:en16931:2017', rules: 'en16931' })
    assert.deepEqual(r.stated.lines.map((l) => [l.quantity, l.unit_price, l.net_amount]), [['10', '20.00', '190.00'], ['-2', '54.99', '-109.98']])
    assert.deepEqual(r.stated.allowances, [{ amount: '0.00', reason_code: '95', vat_category: 'S', vat_rate: '19' }])
    assert.deepEqual(r.stated.totals, { BT106: '80.02', BT107: '0.00', BT109: '80.02', BT110: '15.20', BT112: '95.22', BT113: '3.00', BT114: '0.01', BT115: '92.23' })
    assert.deepEqual(r.stated.vat_breakdown, [{ category: 'S', rate: '19', taxable: '80.02', tax: '15.20' }])
    // Not a Peppol document: nothing Peppol among the findings; what UBL output would need is under resend.
    assert.ok(!r.findings.some((f) => /peppol/i.test(f.rule + f.message)), JSON.stringify(r.findings))
    assert.ok(r.resend.ubl.some((n) => n.path === 'from.peppol_id' || /peppol/i.test(n.message)), JSON.stringify(r.resend.ubl))
    assert.ok(r.resend.pdf.some((n) => n.bt === 'BT-131' && /190\.00/.test(n.message)), JSON.stringify(r.resend.pdf))
    assert.ok(r.resend.pdf.some((n) => n.bt === 'BT-114'), JSON.stringify(r.resend.pdf))
  })

  it('the readable PDF prints the stated amounts (−109.98, 190.00, paid 3.00, rounding 0.01, due 92.23), not recomputed ones', async () => {
    const text = pdfText(await renderReceivedPdf(await read(doc()), 'en'))
    for (const s of ['-€109.98', '€190.00', '€3.00', '€0.01', '€92.23', '€80.02', '€15.20']) assert.ok(text.includes(s), `${s} not in:\n${text}`)
    assert.ok(!text.includes('€200.00'), 'quantity × price printed instead of the stated 190.00')
  })

  it('BT-106 off by 1.00 is BR-CO-10 with both values, also when other rules fail; a line off by 10.00 is found too', async () => {
    const off = await read(doc({ seller: '', totals: { BT106: '81.02' } }))
    const co10 = off.findings.find((f) => f.rule === 'BR-CO-10')
    assert.deepEqual(co10 && { severity: co10.severity, bt: co10.bt, stated: co10.stated, computed: co10.computed }, { severity: 'error', bt: 'BT-106', stated: '81.02', computed: '80.02' })
    assert.ok(off.findings.some((f) => f.rule === 'BR-06'), 'the missing seller name is reported as well')
    assert.ok(off.findings.some((f) => f.rule === 'BR-CO-13' && f.computed === '81.02'))
    const lineOff = await read(doc({ lines: line('1', '10', '20.00', '200.00') + line('2', '-2', '54.99', '-109.98') }))
    assert.deepEqual(lineOff.findings.filter((f) => f.severity === 'error').map((f) => [f.rule, f.stated, f.computed]).find(([r]) => r === 'BR-CO-10'), ['BR-CO-10', '80.02', '90.02'])
    assert.ok(lineOff.findings.some((f) => f.rule === 'BR-S-08' && f.computed === '90.02'), JSON.stringify(lineOff.findings))
  })

  it('VAT categories: E exempt by code only (BT-121), B split payment in an Italian invoice, O without rate: 0 errors; B abroad is BR-B-01; S with an exemption reason is BR-S-10', async () => {
    const exempt = await read(doc({
      lines: line('1', '1', '100.00', '100.00', 'E', '0'), allowances: '',
      tax: subtotal('E', '0', '100.00', '0.00', '<cbc:TaxExemptionReasonCode>VATEX-EU-132</cbc:TaxExemptionReasonCode>'),
      totals: { BT106: '100.00', BT107: undefined, BT109: '100.00', BT110: '0.00', BT112: '100.00', BT113: undefined, BT114: undefined, BT115: '100.00' },
    }))
    assert.deepEqual(errors(exempt), [], JSON.stringify(exempt.findings))
    assert.equal(exempt.stated.vat_breakdown[0]!.exemption_code, 'VATEX-EU-132')
    const b = (country: string) => doc({
      sellerCountry: country, buyerCountry: 'IT', lines: line('1', '1', '100.00', '100.00', 'B', '22'), allowances: '',
      tax: subtotal('B', '22', '100.00', '22.00'),
      totals: { BT106: '100.00', BT107: undefined, BT109: '100.00', BT110: '22.00', BT112: '122.00', BT113: undefined, BT114: undefined, BT115: '122.00' },
    })
    const split = await read(b('IT'))
    assert.deepEqual(errors(split), [], JSON.stringify(split.findings))
    assert.deepEqual((await read(b('DE'))).findings.filter((f) => f.severity === 'error').map((f) => f.rule), ['BR-B-01'])
    const o = await read(doc({
      lines: line('1', '1', '50.00', '50.00', 'O', null), allowances: '',
      tax: subtotal('O', null, '50.00', '0.00', '<cbc:TaxExemptionReason>Not subject to VAT</cbc:TaxExemptionReason>'),
      totals: { BT106: '50.00', BT107: undefined, BT109: '50.00', BT110: '0.00', BT112: '50.00', BT113: undefined, BT114: undefined, BT115: '50.00' },
    }).replace(/<cac:PartyTaxScheme>.*?<\/cac:PartyTaxScheme>/s, '<cac:PartyIdentification><cbc:ID>S-1</cbc:ID></cac:PartyIdentification>'))
    assert.deepEqual(errors(o), [], JSON.stringify(o.findings))
    const s10 = await read(doc({ tax: subtotal('S', '19', '80.02', '15.20', '<cbc:TaxExemptionReason>why</cbc:TaxExemptionReason>') }))
    assert.deepEqual(errors(s10).map((f) => f.rule), ['BR-S-10'])
  })

  it('XRechnung rules only when declared: BR-DE-15 for a missing buyer reference; a direct debit (59) needs no IBAN; none of it for plain EN 16931', async () => {
    const xr = 'urn:cen.eu:en16931:2017#compliant#urn:xeinkauf.de:kosit:xrechnung_3.0'
    const declared = await read(doc({ spec: xr }))
    assert.equal(declared.profile.rules, 'xrechnung')
    assert.ok(declared.findings.some((f) => f.rule === 'BR-DE-15' && f.severity === 'error' && f.bt === 'BT-10'), JSON.stringify(declared.findings))
    const debit = '<cac:PaymentMeans><cbc:PaymentMeansCode>59</cbc:PaymentMeansCode><cac:PaymentMandate><cbc:ID>MANDATE-1</cbc:ID><cac:PayerFinancialAccount><cbc:ID>DE02120300000000202051</cbc:ID></cac:PayerFinancialAccount></cac:PaymentMandate></cac:PaymentMeans>'
    const dd = await read(doc({ spec: xr, buyerReference: 'LW-1', payment: debit }))
    assert.ok(!dd.findings.some((f) => f.rule === 'BR-DE-23' || f.rule === 'BR-DE-25' || f.rule === 'BR-61'), JSON.stringify(dd.findings))
    assert.deepEqual(dd.stated.payment_means, [{ code: '59', mandate: 'MANDATE-1', debited_account: 'DE02120300000000202051' }])
    assert.ok(!(await read(doc())).findings.some((f) => f.rule.startsWith('BR-DE')))
  })

  it('an IBAN with a wrong check digit is a warning, never an error; EUX as currency is BR-CL-04 naming BT-5', async () => {
    const iban = await read(doc({ payment: '<cac:PaymentMeans><cbc:PaymentMeansCode>58</cbc:PaymentMeansCode><cac:PayeeFinancialAccount><cbc:ID>DE89370400440532013001</cbc:ID></cac:PayeeFinancialAccount></cac:PaymentMeans>' }))
    assert.deepEqual(errors(iban), [])
    assert.ok(iban.findings.some((f) => f.rule === 'IBAN' && f.severity === 'warning' && f.bt === 'BT-84'))
    const eux = await read(doc({ currency: 'EUX' }))
    const cl = eux.findings.find((f) => f.rule === 'BR-CL-04')
    assert.ok(cl && cl.bt === 'BT-5' && /BT-5/.test(cl.message) && /EUX/.test(cl.message), JSON.stringify(eux.findings))
    // The readable PDF still renders with a currency Intl does not know.
    assert.match(pdfText(await renderReceivedPdf(eux, 'en')), /BR-CL-04/)
  })

  it('every finding message is one clean line naming a BT and its rule; none is zod wording', async () => {
    const broken = doc({ seller: '', currency: 'EUX', totals: { BT106: '1.00', BT115: '5.00' }, lines: line('1', '10', '-20.00', '190.00', 'S', '0') })
    const r = await read(broken)
    assert.ok(r.findings.length >= 5)
    for (const f of r.findings.filter((x) => x.rule !== 'XSD')) {
      assert.doesNotMatch(f.message, /[\u0000-\u001f\u007f-\u009f]/, f.message)
      assert.doesNotMatch(f.message, /Too small|Too big|expected number/, f.message)
      assert.match(f.message, /B[TG]-\d+/, f.message)
      assert.ok(f.message.includes(f.rule), f.message)
    }
    for (const needs of Object.values(r.resend)) for (const n of needs) assert.doesNotMatch(n.message, /^Too small|[\u0000-\u001f]/, n.message)
  })

  it('entities and character references are decoded; an undeclared entity, a bare & and &#0; are 400; DTDs stay refused', async () => {
    const r = await read(doc({ seller: 'DB Station&amp;Service AG M&#252;ller &#x4E3C; &lt;3&gt;' }))
    assert.equal(r.invoice.from.name, 'DB Station&Service AG Müller 丼 <3>')
    for (const [bad, why] of [['&xxe;', /entity &xxe; is not declared/], ['A & B', /not an entity or character reference/], ['&#0;', /not an entity or character reference/]] as const) {
      const err = await refusal(doc({ seller: bad }))
      assert.equal(err.status, 400)
      assert.match(err.message, why)
    }
    assert.equal((await refusal(doc().replace('<Invoice ', '<!DOCTYPE Invoice []><Invoice '))).status, 400)
  })
})

describe('receiving e-invoices: nesting and element names the parser refuses are a 400', () => {
  it('100,000 levels of <é>, <:a>, <丼>: 400 naming the depth; __proto__, constructor, prototype in an otherwise valid document: 400 naming the name', async () => {
    for (const name of ['é', ':a', '丼', 'a']) {
      const err = await refusal(`<${name}>`.repeat(100_000) + `</${name}>`.repeat(100_000))
      assert.equal(err.status, 400)
      assert.match(err.message, /nested deeper than 64/)
    }
    for (const name of ['__proto__', 'constructor', 'prototype']) {
      const err = await refusal(doc().replace('<cbc:ID>R-1</cbc:ID>', `<cbc:ID>R-1</cbc:ID><${name}>x</${name}>`))
      assert.equal(err.status, 400)
      assert.ok(err.message.includes(name), err.message)
      assert.doesNotMatch(err.message, /[\u0000-\u001f]/)
    }
  })

  it('fast-check: any element names at any depth read or are refused with a 400, never another error', async () => {
    const name = fc.oneof(
      fc.constantFrom('é', ':a', '丼', 'a', '__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'cbc:ID', 'a:b:c', '_', 'Ω'),
      fc.string({ unit: 'grapheme', minLength: 1, maxLength: 6 }).filter((s) => !/[<>&"'\s/=!?]/.test(s)),
    )
    await fc.assert(
      fc.asyncProperty(fc.array(name, { minLength: 1, maxLength: 4 }), fc.integer({ min: 1, max: 3000 }), fc.boolean(), async (names, depth, inInvoice) => {
        let inner = ''
        for (let i = depth - 1; i >= 0; i--) {
          const n = names[i % names.length]!
          inner = `<${n}>${inner || 'x'}</${n}>`
        }
        const xml = inInvoice ? doc().replace('<cbc:ID>R-1</cbc:ID>', `<cbc:ID>R-1</cbc:ID>${inner}`) : inner
        try {
          await read(xml)
        } catch (err) {
          assert.ok(err instanceof HttpError, `not an HttpError: ${String(err)}`)
          assert.equal(err.status, 400, err.message)
          assert.doesNotMatch(err.message, /[\u0000-\u001f]/)
        }
      }),
      { numRuns: RUNS * 8, seed: SEED },
    )
  })
})
