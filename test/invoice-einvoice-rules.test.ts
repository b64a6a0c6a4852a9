// The EN 16931 rules the service enforces itself, one test per rule: the VAT arithmetic (vat.ts),
// the business-rule check on the e-invoice model (einvoice-rules.ts: each rule fails on a model
// broken in just that way), and the terms each format requires (einvoice-requirements.ts).
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { renderEInvoice } from '../src/invoice/einvoice/einvoice-render.ts'
import { renderInvoicePdf } from '../src/invoice/pdf/thread-render-pdf.ts'
import { buildEInvoice } from '../src/invoice/einvoice/einvoice-model.ts'
import { businessRuleViolations } from '../src/invoice/einvoice/einvoice-rules.ts'
import { formatProblems, rateProblems } from '../src/invoice/model/einvoice-requirements.ts'
import { invoiceBodySchema } from '../src/invoice/invoice-schema.ts'
import { computeVat } from '../src/invoice/model/vat.ts'
import { computeTotals } from '../src/invoice/model/money.ts'
import { CII_XSD, fullRequest, pdfAttachments, ublXsdOf, xsdValidate } from './helpers/einvoice.ts'

const model = (extra: Record<string, unknown> = {}) => {
  const req = invoiceBodySchema.parse(fullRequest({ format: 'ubl', ...extra }))
  return buildEInvoice(req, '2026-11-23').invoice as any
}
const inv = (m: any) => m['ubl:Invoice']

describe('e-invoice rules', () => {
  describe('VAT breakdown arithmetic', () => {
    it('one invoice-wide rate gives exactly the legacy totals', () => {
      const items = [{ quantity: 3, unit_price: 0.335 }, { quantity: 1, unit_price: 1.005 }]
      const legacy = computeTotals(items, { discount: 0.5, tax_rate: 12.5 })
      const vat = computeVat({ items, discount: 0.5, tax_rate: 12.5 })
      assert.deepEqual([vat.subtotal, vat.discount, vat.tax, vat.total], [legacy.subtotal, legacy.discount, legacy.tax, legacy.total])
      assert.equal(vat.groups.length, 1)
    })

    it('groups lines by category and rate; the discount shares add up exactly', () => {
      const v = computeVat({ items: [{ quantity: 1, unit_price: 1 }, { quantity: 1, unit_price: 1, tax_rate: 7 }, { quantity: 1, unit_price: 1 }], tax_rate: 19, discount: 0.01 })
      assert.deepEqual(v.groups.map((g) => [g.category, g.rate, g.lines, g.allowance]), [['S', 19, 200n, 1n], ['S', 7, 100n, 0n]])
      assert.equal(v.groups.reduce((a, g) => a + g.allowance, 0n), v.discount)
    })

    it('minor units follow the currency: JPY 0 decimals, BHD 3', () => {
      assert.equal(computeVat({ items: [{ quantity: 3, unit_price: 333.5 }] }, 0).subtotal, 1001n) // 1000.5 → 1001
      assert.equal(computeVat({ items: [{ quantity: 1, unit_price: 1.2345 }] }, 3).subtotal, 1235n) // 1.2345 → 1.235
    })
  })

  describe('business rules on the model', () => {
    it('a model built from a valid request breaks none', () => {
      for (const extra of [{}, { document_type: 'credit_note' }, { currency: 'JPY', discount: 7 }, { items: [{ description: 'Export', quantity: 3, unit_price: 9.95, tax_category: 'G' }], tax_rate: undefined, discount: 5 }]) {
        assert.deepEqual(businessRuleViolations(model(extra)), [])
      }
    })

    const cases: [string, (i: any) => void][] = [
      ['BR-CO-10', (i) => (i['cac:InvoiceLine'][0]['cbc:LineExtensionAmount'] = '1200.01')],
      ['BR-CO-11', (i) => (i['cac:LegalMonetaryTotal']['cbc:AllowanceTotalAmount'] = '49.00')],
      ['BR-CO-13', (i) => (i['cac:LegalMonetaryTotal']['cbc:TaxExclusiveAmount'] = '1690.00')],
      ['BR-CO-14', (i) => (i['cac:TaxTotal'][0]['cbc:TaxAmount'] = '316.00')],
      ['BR-CO-15', (i) => (i['cac:LegalMonetaryTotal']['cbc:TaxInclusiveAmount'] = '2006.43')],
      ['BR-CO-16', (i) => (i['cac:LegalMonetaryTotal']['cbc:PayableAmount'] = '2006.40')],
      ['BR-CO-17', (i) => (i['cac:TaxTotal'][0]['cac:TaxSubtotal'][0]['cbc:TaxAmount'] = '313.75')],
      ['BR-CO-18', (i) => (i['cac:TaxTotal'][0]['cac:TaxSubtotal'] = [])],
      ['BR-S-08', (i) => (i['cac:TaxTotal'][0]['cac:TaxSubtotal'][0]['cbc:TaxableAmount'] = '1651.16')],
      ['BR-S-01', (i) => (i['cac:InvoiceLine'][1]['cac:Item']['cac:ClassifiedTaxCategory']['cbc:Percent'] = '5')],
      ['BR-DEC', (i) => (i['cac:LegalMonetaryTotal']['cbc:PayableAmount'] = '2006.420')],
      ['BR-CO-26', (i) => {
        const seller = i['cac:AccountingSupplierParty']['cac:Party']
        seller['cac:PartyTaxScheme'] = [{ 'cbc:CompanyID': '12/345/67890', 'cac:TaxScheme': { 'cbc:ID': 'FC' } }]
        delete seller['cac:PartyLegalEntity']['cbc:CompanyID']
      }],
    ]
    for (const [rule, breakIt] of cases) {
      it(`${rule} fails on a model broken for it`, () => {
        const m = model()
        breakIt(inv(m))
        const v = businessRuleViolations(m)
        assert.ok(v.some((x) => x.startsWith(rule)), `${rule} not reported: ${v.join(' | ')}`)
      })
    }
  })

  describe('terms each format needs', () => {
    it('a full request has none missing in any format', () => {
      for (const format of ['ubl', 'xrechnung', 'facturx']) assert.deepEqual(formatProblems(fullRequest({ format }) as any), [])
    })

    it('a plain PDF needs none of them', () => {
      assert.deepEqual(formatProblems({ items: [{}] } as any), [])
    })

    const missing: [string, string, (r: any) => void][] = [
      ['facturx', 'invoice_number (BT-1)', (r) => delete r.invoice_number],
      ['facturx', 'currency (BT-5)', (r) => delete r.currency],
      ['facturx', 'from.name (BT-27)', (r) => delete r.from.name],
      ['facturx', 'from.country (BT-40)', (r) => delete r.from.country],
      ['facturx', 'to.name (BT-44)', (r) => delete r.to.name],
      ['facturx', 'to.country (BT-55)', (r) => delete r.to.country],
      ['facturx', 'from.vat_id (BT-31) is required (or from.tax_number, BT-32) for tax category S (BR-S-02)', (r) => delete r.from.vat_id],
      ['facturx', 'due_date (BT-9) or payment.terms (BT-20) is required for format facturx (BR-CO-25)', (r) => { delete r.due_date; delete r.payment.terms }],
      ['facturx', 'date (BT-2) must be a date YYYY-MM-DD', (r) => (r.date = '2 Nov 2026')],
      ['facturx', 'to.vat_id (BT-48)', (r) => { delete r.to.vat_id; r.items = [{ quantity: 1, unit_price: 1, tax_category: 'AE' }] }],
      ['facturx', 'delivery_date (BT-72) is required for tax category K (BR-IC-11)', (r) => (r.items = [{ quantity: 1, unit_price: 1, tax_category: 'K' }])],
      ['facturx', 'tax_exemption_reason (BT-120) is required for tax category E (BR-E-10)', (r) => (r.items = [{ quantity: 1, unit_price: 1, tax_category: 'E' }])],
      ['facturx', 'BR-O-11', (r) => r.items.push({ quantity: 1, unit_price: 1, tax_category: 'O' })],
      ['ubl', 'buyer_reference (BT-10) or order_reference (BT-13)', (r) => delete r.buyer_reference],
      ['ubl', 'to.peppol_id (BT-49) is required for format ubl (PEPPOL-EN16931-R010) (an e-mail address is no Peppol electronic address: PEPPOL-EN16931-CL008)', (r) => delete r.to.peppol_id],
      ['ubl', 'from.peppol_id (BT-34) is required for format ubl (PEPPOL-EN16931-R020)', (r) => delete r.from.peppol_id],
      ['xrechnung', 'to.email (BT-49)', (r) => delete r.to.email],
      ['ubl', 'payment.terms (BT-20) is required for a credit note', (r) => { r.document_type = 'credit_note'; delete r.payment.terms }],
      ['xrechnung', 'buyer_reference (BT-10) is required for format xrechnung (BR-DE-15', (r) => delete r.buyer_reference],
      ['xrechnung', 'from.city (BT-37)', (r) => delete r.from.city],
      ['xrechnung', 'to.postal_code (BT-53)', (r) => delete r.to.postal_code],
      ['xrechnung', 'from.phone (BT-42)', (r) => delete r.from.phone],
      ['xrechnung', 'payment.iban (BT-84)', (r) => delete r.payment.iban],
    ]
    for (const [format, term, change] of missing) {
      it(`${format}: ${term}`, () => {
        const r = fullRequest({ format })
        change(r)
        const p = formatProblems(r as any)
        assert.ok(p.some((m) => m.includes(term)), `"${term}" not in ${JSON.stringify(p)}`)
      })
    }

    it('category and rate: S needs a rate > 0, every other category 0', () => {
      assert.deepEqual(rateProblems({ items: [{ tax_category: 'S' }] } as any).map((p) => p.message), ['items[0].tax_rate must be > 0 for tax category S (BR-S-05)'])
      assert.deepEqual(rateProblems({ items: [{}], tax_category: 'Z', tax_rate: 5 } as any).map((p) => p.message), ['tax_rate must be 0 for tax category Z (BR-Z-05)'])
      assert.deepEqual(rateProblems({ items: [{ tax_category: 'K', tax_rate: 0 }], tax_rate: 19 } as any), [])
    })
  })

  describe('BR-CO-26 and BR-DE-14 in the written XML', () => {
    /** xmllint's answer to an XPath 1.0 expression over the document ("true"/"false" for a test). */
    const xpath = (xml: Buffer, expr: string) => execFileSync('xmllint', ['--xpath', expr, '-'], { input: xml }).toString('utf8').trim()
    const el = (name: string) => `*[local-name()="${name}"]`

    async function write(body: Record<string, unknown>): Promise<Buffer> {
      const req = invoiceBodySchema.parse(body)
      if (req.format !== 'facturx') return renderEInvoice(req, { today: '2026-11-23' })
      const pdf = await renderInvoicePdf(req, { today: '2026-11-23', embedFonts: true })
      return pdfAttachments(await renderEInvoice(req, { today: '2026-11-23', pdf })).get('factur-x.xml')!
    }

    // A German Kleinunternehmer: exempt (§ 19 UStG), a tax number (BT-32) and no VAT id.
    const smallBusiness = (format: string, from: Record<string, unknown> = {}) => {
      const r = fullRequest({ format, tax_rate: undefined, tax_category: 'E', tax_exemption_reason: 'Kein Ausweis von Umsatzsteuer, da Kleinunternehmer gemäß § 19 UStG', discount: 0 })
      r.items = r.items.map(({ tax_rate, ...item }: Record<string, unknown>) => item)
      delete r.from.vat_id
      Object.assign(r.from, { tax_number: '12/345/67890', ...from })
      return r
    }

    for (const format of ['ubl', 'xrechnung', 'facturx']) {
      it(`${format}: a seller with only a tax number is a 400 naming BT-30 and BT-31 (BR-CO-26)`, () => {
        const p = formatProblems(smallBusiness(format) as any)
        assert.deepEqual(p, [`from.legal_id (BT-30) or from.vat_id (BT-31) is required for format ${format} (BR-CO-26; a tax number, BT-32, does not identify the seller)`])
      })

      it(`${format}: with from.legal_id (BT-30) or from.vat_id (BT-31) the XML satisfies BR-CO-26 and its schema`, async () => {
        for (const from of [{ legal_id: 'HRB 12345' }, { vat_id: 'DE987654321' }]) {
          const body = smallBusiness(format, from)
          assert.deepEqual(formatProblems(body as any), [])
          const xml = await write(body)
          const text = xml.toString('utf8')
          if (format === 'ubl') {
            xsdValidate(xml, ublXsdOf(text))
            // The rule's UBL test: a party identification, a legal entity id or a VAT scheme id.
            const seller = `//${el('AccountingSupplierParty')}/${el('Party')}`
            assert.equal(xpath(xml, `boolean(${seller}/${el('PartyIdentification')}/${el('ID')} or ${seller}/${el('PartyLegalEntity')}/${el('CompanyID')} or ${seller}/${el('PartyTaxScheme')}[${el('TaxScheme')}/${el('ID')}="VAT"]/${el('CompanyID')})`), 'true')
          } else {
            xsdValidate(xml, CII_XSD)
            // The rule's CII test, from EN16931-CII-model.sch.
            const seller = `//${el('SellerTradeParty')}`
            assert.equal(xpath(xml, `boolean(${seller}/${el('ID')} or ${seller}/${el('GlobalID')} or ${seller}/${el('SpecifiedLegalOrganization')}/${el('ID')} or ${seller}/${el('SpecifiedTaxRegistration')}/${el('ID')}[@schemeID="VA"])`), 'true')
          }
          assert.ok(text.includes(Object.values(from)[0]!), 'the identifier sent is in the XML')
        }
      })
    }

    // Not subject to VAT (category O): no VAT ids at all (BR-O-02), so the legal id identifies the seller.
    const notSubject = (format: string) => {
      const r = fullRequest({ format, tax_rate: undefined, tax_category: 'O' })
      r.items = r.items.map(({ tax_rate, ...item }: Record<string, unknown>) => item)
      delete r.from.vat_id
      delete r.to.vat_id
      Object.assign(r.from, { tax_number: '12/345/67890', legal_id: 'HRB 12345' })
      return r
    }

    it('xrechnung, category O: every VAT breakdown has its rate BT-119 = 0 (BR-DE-14); lines and allowances have none (BR-O-05, BR-O-06)', async () => {
      const body = notSubject('xrechnung')
      assert.deepEqual(formatProblems(body as any), [])
      const xml = await write(body)
      xsdValidate(xml, CII_XSD)
      const breakdown = `//${el('ApplicableHeaderTradeSettlement')}/${el('ApplicableTradeTax')}`
      assert.equal(xpath(xml, `count(${breakdown})`), '1')
      // KoSIT's BR-DE-14 test in its rule context.
      assert.equal(xpath(xml, `count(${breakdown}[not(${el('RateApplicablePercent')}[boolean(normalize-space(.))])])`), '0')
      assert.equal(xpath(xml, `number(${breakdown}/${el('RateApplicablePercent')})`), '0')
      assert.equal(xpath(xml, `number(${breakdown}/${el('CalculatedAmount')})`), '0') // BR-O-09
      assert.equal(xpath(xml, `boolean(${breakdown}/${el('ExemptionReasonCode')} or ${breakdown}/${el('ExemptionReason')})`), 'true') // BR-O-10
      assert.equal(xpath(xml, `count(//${el('SpecifiedLineTradeSettlement')}/${el('ApplicableTradeTax')}/${el('RateApplicablePercent')})`), '0')
      assert.equal(xpath(xml, `count(//${el('SpecifiedTradeAllowanceCharge')})`), '1', 'the discount is an allowance')
      assert.equal(xpath(xml, `count(//${el('CategoryTradeTax')}/${el('RateApplicablePercent')})`), '0')
    })

    it('ubl and facturx, category O: no rate anywhere (EN 16931 leaves BT-119 open for O; only XRechnung asks for it)', async () => {
      for (const format of ['ubl', 'facturx']) {
        const xml = await write(notSubject(format))
        xsdValidate(xml, format === 'ubl' ? ublXsdOf(xml.toString('utf8')) : CII_XSD)
        assert.equal(xpath(xml, `count(//${el('RateApplicablePercent')} | //${el('TaxCategory')}/${el('Percent')} | //${el('ClassifiedTaxCategory')}/${el('Percent')})`), '0', format)
      }
    })
  })
})
