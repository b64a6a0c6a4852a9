// Factur-X through the API (docs/einvoice.md): a PDF/A-3b whose embedded factur-x.xml validates against
// CII D16B, with XMP declaring PDF/A-3B and the Factur-X EN 16931 profile, the attachment's
// AFRelationship, every font embedded, and qpdf finding nothing wrong.
import assert from 'node:assert/strict'
import { post } from './helpers/http.ts'
import { startSystem, type TestSystem } from './helpers/system.ts'
import { account } from './helpers/invoice-batch.ts'
import { CII_XSD, fullRequest, pdfAttachments, pdfFonts, pdfRaw, xsdValidate } from './helpers/einvoice.ts'
import { pdfText, qpdfCheck } from './helpers/pdf.ts'

describe('invoice API: Factur-X', () => {
  let sys: TestSystem
  let base: string
  let key: string

  before(async () => {
    sys = await startSystem({ services: ['invoice'] })
    base = sys.url.invoice!
    key = (await account(sys, 'pro')).key
  })
  after(async () => sys?.stop())

  for (const [name, extra] of [
    ['an invoice with two VAT rates and a discount', {}],
    ['a credit note in USD', { document_type: 'credit_note', currency: 'USD', preceding_invoice_number: 'RE-2026-0041' }],
  ] as const) {
    it(`${name}: PDF/A-3b with valid embedded CII XML, fonts embedded, qpdf clean`, async () => {
      const res = await post(`${base}/invoice`, fullRequest({ format: 'facturx', ...extra }), { key })
      assert.equal(res.status, 200, res.text)
      assert.equal(res.headers.get('content-type'), 'application/pdf')
      assert.equal(res.headers.get('content-disposition'), 'attachment; filename="invoice.pdf"')
      qpdfCheck(res.body)

      const files = pdfAttachments(res.body)
      assert.deepEqual([...files.keys()], ['factur-x.xml'])
      const xml = files.get('factur-x.xml')!
      xsdValidate(xml, CII_XSD)
      assert.match(xml.toString(), /<ram:ID>urn:cen\.eu:en16931:2017<\/ram:ID>/)
      assert.match(xml.toString(), new RegExp(`<ram:TypeCode>${'document_type' in extra ? 381 : 380}</ram:TypeCode>`))

      const fonts = pdfFonts(res.body)
      assert.ok(fonts.length > 0)
      assert.deepEqual(fonts.filter((f) => !f.embedded), [], 'every font embedded')

      const raw = pdfRaw(res.body)
      assert.match(raw, /<pdfaid:part>3<\/pdfaid:part>/)
      assert.match(raw, /<pdfaid:conformance>B<\/pdfaid:conformance>/)
      assert.match(raw, /<fx:ConformanceLevel>EN 16931<\/fx:ConformanceLevel>/)
      assert.match(raw, /<fx:DocumentFileName>factur-x\.xml<\/fx:DocumentFileName>/)
      assert.match(raw, /\/AFRelationship \/(Alternative|Data|Source)/)
      assert.match(raw, /\/OutputIntents/)

      assert.match(pdfText(res.body), /RE-2026-0042/)
    })
  }
})
