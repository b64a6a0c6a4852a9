// Legal wording by language (docs/einvoice.md, "Legal wording by language"): credit notes titled as
// German and French law call a seller's correction, without a due date or "bill to"; reverse-charge
// and exemption notes in the invoice's language on the PDF and in the XML (BT-120); the seller's
// register entry in the footer and as BT-30 / BT-33; the French mentions (SIREN, SIRET, penalty
// rate, recovery indemnity). PDF text is read with pdftotext; XML is validated with xmllint.
import assert from 'node:assert/strict'
import { XMLParser } from 'fast-xml-parser'
import { renderEInvoice } from '../src/invoice/einvoice/einvoice-render.ts'
import { renderInvoicePdf } from '../src/invoice/pdf/thread-render-pdf.ts'
import { invoiceBodySchema } from '../src/invoice/invoice-schema.ts'
import { formatProblems } from '../src/invoice/model/einvoice-requirements.ts'
import { CII_XSD, fullRequest, ublXsdOf, xsdValidate, refusalOf } from './helpers/einvoice.ts'
import { pdfText } from './helpers/pdf.ts'

const TODAY = '2026-11-02'
const squash = (s: string) => s.replace(/[ \t\u00a0\u202f]+/g, ' ')
const pdf = async (body: Record<string, unknown>) => squash(pdfText(await renderInvoicePdf(invoiceBodySchema.parse(body), { today: TODAY })))
const xml = async (body: Record<string, unknown>) => {
  const out = await renderEInvoice(invoiceBodySchema.parse(body), { today: TODAY })
  xsdValidate(out, body.format === 'ubl' ? ublXsdOf(out.toString('utf8')) : CII_XSD)
  return out.toString('utf8')
}
const parser = new XMLParser({ ignoreAttributes: true, removeNSPrefix: true, parseTagValue: false })

/** A credit note with one reverse-charge line. */
const reverseCharge = (extra: Record<string, unknown>) =>
  fullRequest({ document_type: 'credit_note', preceding_invoice_number: 'RE-2026-0041', items: [{ description: 'Service', quantity: 1, unit_price: 100, tax_category: 'AE' }], tax_rate: undefined, discount: undefined, ...extra })

/** A seller with its register entry and French ids, and the late-payment mentions. */
const withMentions = (extra: Record<string, unknown>) => {
  const b = fullRequest(extra)
  Object.assign(b.from, { register: { number: 'HRB 187654 B', court: 'Amtsgericht Charlottenburg' }, siren: '732 829 320', siret: '73282932000074' })
  Object.assign(b.payment, { late_penalty_rate: 10.15, recovery_indemnity: 40 })
  return b
}

describe('legal wording by language', () => {
  describe('credit notes', () => {
    const cases = [
      { locale: 'de', has: ['RECHNUNGSKORREKTUR', 'EMPFÄNGER', 'Korrektur zu Rechnung RE-2026-0041'], not: ['GUTSCHRIFT', 'Gutschrift', 'RECHNUNG AN', 'Fällig am'] },
      { locale: 'fr', has: ['AVOIR', 'DESTINATAIRE', 'Avoir sur facture RE-2026-0041'], not: ['FACTURÉ À', 'Échéance'] },
      { locale: 'en', has: ['CREDIT NOTE', 'CREDIT TO', 'Credit for invoice RE-2026-0041'], not: ['BILL TO', 'Due date'] },
    ]
    for (const c of cases) {
      it(`${c.locale}: titled ${c.has[0]}, issued to the recipient, no due date`, async () => {
        const text = await pdf(reverseCharge({ locale: c.locale }))
        for (const s of c.has) assert.ok(text.includes(s), `missing "${s}" in\n${text}`)
        for (const s of c.not) assert.ok(!text.includes(s), `unexpected "${s}" in\n${text}`)
      })
    }

    it('an invoice keeps its title, "bill to" and due date', async () => {
      const text = await pdf(fullRequest({ locale: 'de' }))
      for (const s of ['RECHNUNG', 'RECHNUNG AN', 'Fällig am 2. Dezember 2026']) assert.ok(text.includes(s), s)
    })
  })

  describe('reverse charge and exemption notes', () => {
    for (const [locale, note] of [['de', 'Steuerschuldnerschaft des Leistungsempfängers'], ['fr', 'Autoliquidation'], ['en', 'Reverse charge'], ['it', 'Reverse charge']] as const) {
      it(`${locale}: "${note}" on the PDF and as BT-120 in ubl and xrechnung`, async () => {
        assert.ok((await pdf(reverseCharge({ locale }))).includes(note), 'on the PDF')
        for (const format of ['ubl', 'xrechnung']) {
          const doc = await xml(reverseCharge({ locale, format }))
          assert.ok(doc.includes(`${note}</cbc:TaxExemptionReason>`) || doc.includes(`${note}</ram:ExemptionReason>`), `${format}: BT-120 is not "${note}"`)
        }
      })
    }

    it('de: intra-community supply and export notes; a tax_exemption_reason sent replaces them', async () => {
      const k = await pdf(fullRequest({ locale: 'de', delivery_date: '2026-11-01', items: [{ description: 'Ware', quantity: 1, unit_price: 100, tax_category: 'K' }], tax_rate: undefined, discount: undefined }))
      assert.ok(k.includes('Steuerfreie innergemeinschaftliche Lieferung'), k)
      const g = await pdf(fullRequest({ locale: 'de', items: [{ description: 'Ware', quantity: 1, unit_price: 100, tax_category: 'G' }], tax_rate: undefined, discount: undefined }))
      assert.ok(g.includes('Steuerfreie Ausfuhrlieferung'), g)
      const own = await pdf(reverseCharge({ locale: 'de', tax_exemption_reason: 'Steuerschuldnerschaft des Leistungsempfängers (§ 13b UStG)' }))
      assert.ok(own.includes('(§ 13b UStG)'), own)
    })
  })

  describe('register entry and French mentions', () => {
    it('de PDF: the register entry in the footer, SIREN/SIRET under the seller, the late-payment mentions with the payment details', async () => {
      const text = await pdf(withMentions({ locale: 'de' }))
      for (const s of ['Registergericht: Amtsgericht Charlottenburg, HRB 187654 B', 'SIREN: 732 829 320', 'SIRET: 732 829 320 00074', 'Verzugszinsen: 10,15 % p. a.', 'Pauschale für Beitreibungskosten bei Zahlungsverzug: 40,00 €']) {
        assert.ok(text.includes(s), `missing "${s}" in\n${text}`)
      }
    })

    it('fr PDF: the mentions in French', async () => {
      const text = await pdf(withMentions({ locale: 'fr' }))
      for (const s of ['Immatriculation : Amtsgericht Charlottenburg HRB 187654 B', 'SIREN: 732 829 320', 'Pénalités de retard : taux annuel de 10,15 %', 'Indemnité forfaitaire pour frais de recouvrement en cas de retard de paiement : 40,00 €']) {
        assert.ok(text.includes(s), `missing "${s}" in\n${text}`)
      }
    })

    it('XML: BT-30 the legal id (else SIREN, else register number), BT-33 the register entry, BT-20 the mentions', async () => {
      const ubl = parser.parse(await xml(withMentions({ locale: 'de', format: 'ubl' }))).Invoice
      const legal = ubl.AccountingSupplierParty.Party.PartyLegalEntity
      assert.deepEqual([legal.CompanyID, legal.CompanyLegalForm], ['732829320', 'Registergericht: Amtsgericht Charlottenburg, HRB 187654 B'])
      assert.equal(ubl.PaymentTerms.Note, 'Net 30 days\nVerzugszinsen: 10,15 % p. a.\nPauschale für Beitreibungskosten bei Zahlungsverzug: 40.00 EUR')
      const cii = parser.parse(await xml(withMentions({ locale: 'de', format: 'xrechnung' }))).CrossIndustryInvoice.SupplyChainTradeTransaction
      const seller = cii.ApplicableHeaderTradeAgreement.SellerTradeParty
      assert.deepEqual([seller.Description, seller.SpecifiedLegalOrganization.ID], ['Registergericht: Amtsgericht Charlottenburg, HRB 187654 B', '732829320'])
      const noSiren = withMentions({ format: 'ubl' })
      delete noSiren.from.siren
      assert.equal(parser.parse(await xml(noSiren)).Invoice.AccountingSupplierParty.Party.PartyLegalEntity.CompanyID, 'HRB 187654 B')
    })

    it('a seller identified by its register number alone satisfies BR-CO-26', () => {
      const b = fullRequest({ format: 'xrechnung', tax_rate: undefined, tax_category: 'E', tax_exemption_reason: 'Kleinunternehmer gemäß § 19 UStG', discount: 0 })
      b.items = b.items.map(({ tax_rate, ...item }: Record<string, unknown>) => item)
      delete b.from.vat_id
      b.from.tax_number = '12/345/67890'
      assert.match(formatProblems(b as any).join(), /BR-CO-26/)
      b.from.register = { number: 'HRB 187654 B', court: 'Amtsgericht Charlottenburg' }
      assert.deepEqual(formatProblems(b as any), [])
    })

    it('a SIREN or SIRET with a wrong check digit, or a register without its court, is a 400 naming the field', () => {
      const b = fullRequest({})
      b.from.siren = '732 829 321'
      assert.equal(refusalOf(b), 'from.siren must be a SIREN: 9 digits with a valid check digit')
      delete b.from.siren
      b.from.siret = '73282932000075'
      assert.equal(refusalOf(b), 'from.siret must be a SIRET: 14 digits with a valid check digit')
      delete b.from.siret
      b.from.register = { number: 'HRB 187654 B' }
      assert.equal(refusalOf(b), 'from.register.court is required')
    })
  })
})
