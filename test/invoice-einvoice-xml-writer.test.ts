// E-invoice XML is written by fast-xml-parser's builder instead of the e-invoice library's own
// xmlbuilder2 DOM (src/invoice/einvoice/einvoice-render.ts, for speed). The two must write the same XML
// document: the canonical forms (xmllint --c14n) of both are compared for varied invoices in every
// XML format, including the CII inside Factur-X, text that needs escaping, credit notes, several
// rates, a discount, a non-EUR currency without minor units.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { FormatFactoryService } from '@e-invoice-eu/core'
import { libraryRenderXML, renderEInvoice } from '../src/invoice/einvoice/einvoice-render.ts'
import { renderInvoicePdf } from '../src/invoice/pdf/thread-render-pdf.ts'
import { invoiceBodySchema } from '../src/invoice/invoice-schema.ts'
import { CII_XSD, fullRequest, pdfAttachments, ublXsdOf, xsdValidate } from './helpers/einvoice.ts'

const c14n = (xml: Buffer) => execFileSync('xmllint', ['--c14n', '-'], { input: xml }).toString('utf8')

type Proto = { renderXML(data: unknown): string }
let proto = Object.getPrototypeOf(new FormatFactoryService().createFormatService('UBL', { log() {}, warn() {}, error() {} })) as Proto
while (!Object.prototype.hasOwnProperty.call(proto, 'renderXML')) proto = Object.getPrototypeOf(proto) as Proto

async function bothWriters(body: Record<string, unknown>): Promise<{ ours: Buffer; library: Buffer }> {
  const req = invoiceBodySchema.parse(body)
  const pdf = req.format === 'facturx' ? await renderInvoicePdf(req, { today: '2026-11-02', embedFonts: true }) : undefined
  const xmlOf = (out: Buffer) => (req.format === 'facturx' ? pdfAttachments(out).get('factur-x.xml')! : out)
  const ours = xmlOf(await renderEInvoice(req, { today: '2026-11-02', pdf }))
  const mine = proto.renderXML
  proto.renderXML = libraryRenderXML
  try {
    return { ours, library: xmlOf(await renderEInvoice(req, { today: '2026-11-02', pdf })) }
  } finally {
    proto.renderXML = mine
  }
}

const tricky = 'Ærøskøbing <b>bold</b> & "quoted" \'single\' > 日本語 ½ €'
const cases: [string, Record<string, unknown>][] = [
  ['ubl', fullRequest({ format: 'ubl' })],
  ['ubl credit note', fullRequest({ format: 'ubl', document_type: 'credit_note', preceding_invoice_number: 'RE-2026-0041' })],
  ['ubl, text that needs escaping', fullRequest({ format: 'ubl', notes: tricky, items: [{ description: tricky, quantity: 10, unit_price: 10 }] })],
  ['xrechnung', fullRequest({ format: 'xrechnung' })],
  ['xrechnung in JPY, two rates', fullRequest({ format: 'xrechnung', currency: 'JPY', tax_rate: 10, discount: 100, items: [{ description: 'Widget', quantity: 7, unit_price: 1234 }, { description: 'Food', quantity: 1, unit_price: 999, tax_rate: 8 }] })],
  ['xrechnung credit note, escaped text', fullRequest({ format: 'xrechnung', document_type: 'credit_note', preceding_invoice_number: 'RE-2026-0041', notes: tricky })],
  ['facturx', fullRequest({ format: 'facturx', locale: 'fr', items: [{ description: tricky, quantity: 3, unit_price: 19.99, tax_rate: 5.5 }, { description: 'Conseil', quantity: 2, unit_price: 500 }] })],
]

describe('invoice e-invoice XML: fast writer = the library writer', () => {
  for (const [name, body] of cases) {
    it(`${name}: the same canonical XML as xmlbuilder2, valid against its schema`, async () => {
      const { ours, library } = await bothWriters(body)
      assert.equal(c14n(ours), c14n(library))
      const text = ours.toString('utf8')
      assert.match(text, /^<\?xml version="1\.0" encoding="utf-8"\?>\n</)
      xsdValidate(ours, text.includes('CrossIndustryInvoice') ? CII_XSD : ublXsdOf(text))
    })
  }

  it('escapes what would break the XML and keeps every character of the text', async () => {
    const { ours } = await bothWriters(fullRequest({ format: 'ubl', items: [{ description: tricky, quantity: 10, unit_price: 10 }] }))
    const text = ours.toString('utf8')
    assert.ok(!text.includes('<b>'), 'markup in a description is escaped')
    assert.match(c14n(ours), /Ærøskøbing &lt;b&gt;bold&lt;\/b&gt; &amp; "quoted" 'single' &gt; 日本語 ½ €/)
  })
})
