// Peppol BIS Billing 3.0 and EN 16931 Schematron rules over `ubl` output (docs/einvoice.md,
// "Peppol BIS rules in the tests"): varied invoices and credit notes — two rates and a
// discount, allowances and charges per line and per document, reverse charge with a charge, export,
// JPY, exempt, the register entry and French mentions — give no fatal finding; a document broken
// on purpose gives the finding it should, so the rules really ran. The rule files come from
// PEPPOL_RULES_DIR (test/helpers/peppol-rules.ts); without them the check is skipped and reported.
import assert from 'node:assert/strict'
import { renderEInvoice } from '../src/invoice/einvoice/einvoice-render.ts'
import { invoiceBodySchema } from '../src/invoice/invoice-schema.ts'
import { fullRequest, ublXsdOf, xsdValidate } from './helpers/einvoice.ts'
import { ruleFindings } from './helpers/peppol-rules.ts'
import { CII_XSD } from './helpers/einvoice.ts'

/** Both parties addressed by Peppol participant ids, as a Peppol network requires (EAS code list). */
const peppol = (extra: Record<string, unknown>) => {
  const b = fullRequest({ format: 'ubl', ...extra })
  b.from.peppol_id = '0204:991-12345-67'
  b.to.peppol_id = '0009:12345678900015'
  return b
}
const withAdjustments = (b: Record<string, any>) => {
  b.allowances = [{ amount: 10, reason_code: '100', tax_rate: 19 }]
  b.charges = [{ amount: 4.9, reason: 'Versand', reason_code: 'FC', tax_rate: 19 }, { amount: 2, reason_code: 'PC', tax_category: 'S', tax_rate: 7 }]
  b.items[0].allowances = [{ amount: 20, reason: 'Mengenrabatt', reason_code: '95' }]
  b.items[1].charges = [{ amount: 1.5, reason_code: 'ABL' }]
  return b
}

const CASES: Record<string, Record<string, any>> = {
  'two-rates-discount': peppol({}),
  'credit-note': peppol({ document_type: 'credit_note', preceding_invoice_number: 'RE-2026-0041' }),
  'allowances-charges-de': withAdjustments(peppol({ locale: 'de' })),
  'allowances-charges-credit-fr': withAdjustments(peppol({ locale: 'fr', document_type: 'credit_note' })),
  'allowances-charges-jpy': withAdjustments(peppol({ currency: 'JPY' })),
  'reverse-charge-with-charge': peppol({ locale: 'de', items: [{ description: 'Service', quantity: 1, unit_price: 100, tax_category: 'AE' }], tax_rate: undefined, discount: undefined, charges: [{ amount: 5, reason_code: 'FC', tax_category: 'AE' }] }),
  'export-usd': peppol({ currency: 'USD', items: [{ description: 'Export', quantity: 3, unit_price: 9.95, tax_category: 'G' }], tax_rate: undefined, discount: 5 }),
  'exempt-and-standard': peppol({ tax_exemption_reason: 'Steuerfrei nach § 4 Nr. 14 UStG', items: [{ description: 'Therapie', quantity: 1, unit_price: 80, tax_category: 'E' }, { description: 'Buch', quantity: 1, unit_price: 20, tax_rate: 7 }], tax_rate: undefined, discount: undefined }),
  'register-and-mentions': (() => {
    const b = peppol({ locale: 'fr' })
    Object.assign(b.from, { register: { number: 'HRB 187654 B', court: 'Amtsgericht Charlottenburg' }, siren: '732829320' })
    Object.assign(b.payment, { late_penalty_rate: 10.15, recovery_indemnity: 40 })
    return b
  })(),
}

describe('ubl against the Peppol BIS Billing 3.0 and EN 16931 Schematron rules', () => {
  const documents = new Map<string, Buffer>()

  before(async () => {
    for (const [name, body] of Object.entries(CASES)) {
      const xml = await renderEInvoice(invoiceBodySchema.parse(body), { today: '2026-11-02' })
      xsdValidate(xml, ublXsdOf(xml.toString('utf8')))
      documents.set(name, xml)
    }
    // Broken on purpose: the amount due no longer follows from the totals (BR-CO-16).
    const good = documents.get('two-rates-discount')!.toString('utf8')
    documents.set('broken', Buffer.from(good.replace(/<cbc:PayableAmount currencyID="EUR">[^<]*</, '<cbc:PayableAmount currencyID="EUR">1.00<')))
  })

  it('no fatal finding on any generated document; the broken one fails BR-CO-16', function () {
    this.timeout(120_000)
    const findings = ruleFindings(documents, ['PEPPOL-EN16931-UBL', 'CEN-EN16931-UBL'])
    if (!findings) return // skipped and reported by the helper
    const fatal = findings.filter((f) => f.flag === 'fatal' && f.document !== 'broken').map((f) => `${f.document}: ${f.ruleSet} ${f.id} ${f.text}`)
    assert.deepEqual(fatal, [])
    assert.deepEqual(findings.filter((f) => f.document === 'broken').map((f) => [f.ruleSet, f.id, f.flag]), [['CEN-EN16931-UBL', 'BR-CO-16', 'fatal']])
  })

  it('xrechnung (CII): the EN 16931 CII rules find nothing fatal in the same invoices, allowances and charges included', async function () {
    this.timeout(120_000)
    const cii = new Map<string, Buffer>()
    for (const name of ['two-rates-discount', 'credit-note', 'allowances-charges-de', 'allowances-charges-jpy', 'reverse-charge-with-charge', 'register-and-mentions']) {
      const xml = await renderEInvoice(invoiceBodySchema.parse({ ...CASES[name], format: 'xrechnung' }), { today: '2026-11-02' })
      xsdValidate(xml, CII_XSD)
      cii.set(name, xml)
    }
    const findings = ruleFindings(cii, ['CEN-EN16931-CII'])
    if (!findings) return
    assert.deepEqual(findings.filter((f) => f.flag === 'fatal').map((f) => `${f.document}: ${f.id} ${f.text}`), [])
  })
})
