// E-invoices through the API (docs/einvoice.md): `format` ubl and xrechnung answer XML that validates
// against the UBL 2.1 / CII D16B schemas, with the right media type and file name, amounts exact;
// a request missing what a format needs is a 400 naming each field with its business term, and
// is not counted, as is text the XML cannot carry. Batches take the same field and archive .xml files.
import assert from 'node:assert/strict'
import { get, post } from './helpers/http.ts'
import { startSystem, type TestSystem } from './helpers/system.ts'
import { account } from './helpers/invoice-batch.ts'
import { CII_XSD, fullRequest, ublXsdOf, xsdValidate } from './helpers/einvoice.ts'

describe('invoice API: e-invoice XML formats', () => {
  let sys: TestSystem
  let base: string
  let key: string

  before(async () => {
    sys = await startSystem({ services: ['invoice'] })
    base = sys.url.invoice!
    key = (await account(sys, 'pro')).key
  })
  after(async () => sys?.stop())

  const usage = async () => (await get(`${base}/usage`, { key })).json.invoices_this_month as number

  it('ubl: Peppol BIS Billing 3.0 XML, application/xml, invoice.xml, valid UBL 2.1, exact VAT breakdown', async () => {
    const res = await post(`${base}/invoice`, fullRequest({ format: 'ubl' }), { key })
    assert.equal(res.status, 200, res.text)
    assert.match(res.headers.get('content-type')!, /^application\/xml/)
    assert.equal(res.headers.get('content-disposition'), 'attachment; filename="invoice.xml"')
    xsdValidate(res.body, ublXsdOf(res.text))
    assert.match(res.text, /<cbc:CustomizationID>urn:cen\.eu:en16931:2017#compliant#urn:fdc:peppol\.eu:2017:poacc:billing:3\.0<\/cbc:CustomizationID>/)
    // Lines: 1200.00 (19 %), 39.98 (7 %), 500.00 (1.5 × 333.333 = 499.9995 → 500.00, 19 %).
    assert.match(res.text, /<cbc:LineExtensionAmount currencyID="EUR">1739\.98<\/cbc:LineExtensionAmount>/)
    // The 50.00 discount shared by line totals: 19 % group 1700.00 → 48.85, 7 % group 39.98 → 1.15.
    assert.match(res.text, /<cbc:TaxableAmount currencyID="EUR">1651\.15<\/cbc:TaxableAmount>\s*<cbc:TaxAmount currencyID="EUR">313\.72<\/cbc:TaxAmount>/)
    assert.match(res.text, /<cbc:TaxableAmount currencyID="EUR">38\.83<\/cbc:TaxableAmount>\s*<cbc:TaxAmount currencyID="EUR">2\.72<\/cbc:TaxAmount>/)
    assert.match(res.text, /<cbc:PayableAmount currencyID="EUR">2006\.42<\/cbc:PayableAmount>/)
    // A price with more than 2 decimals is written per base quantity: 3333.33 per 10.
    assert.match(res.text, /<cbc:PriceAmount currencyID="EUR">3333\.33<\/cbc:PriceAmount>\s*<cbc:BaseQuantity unitCode="C62">10<\/cbc:BaseQuantity>/)
  })

  it('ubl credit note: a UBL CreditNote document (type 381) referencing the invoice', async () => {
    const res = await post(`${base}/invoice`, fullRequest({ format: 'ubl', document_type: 'credit_note', preceding_invoice_number: 'RE-2026-0041' }), { key })
    assert.equal(res.status, 200, res.text)
    assert.match(res.text, /<CreditNote[\s>]/)
    assert.match(res.text, /<cbc:CreditNoteTypeCode>381<\/cbc:CreditNoteTypeCode>/)
    assert.match(res.text, /<cbc:ID>RE-2026-0041<\/cbc:ID>/)
    xsdValidate(res.body, ublXsdOf(res.text))
  })

  it('xrechnung: CII XML that validates against CII D16B, in USD and JPY too', async () => {
    for (const extra of [{}, { currency: 'USD' }, { currency: 'JPY', items: [{ description: 'Widget', quantity: 7, unit_price: 1234 }, { description: 'Food', quantity: 1, unit_price: 999, tax_rate: 8 }], tax_rate: 10, discount: 100 }]) {
      const res = await post(`${base}/invoice`, fullRequest({ format: 'xrechnung', ...extra }), { key })
      assert.equal(res.status, 200, res.text)
      assert.equal(res.headers.get('content-disposition'), 'attachment; filename="invoice.xml"')
      assert.match(res.text, /urn:cen\.eu:en16931:2017#compliant#urn:xeinkauf\.de:kosit:xrechnung_3\.0/)
      xsdValidate(res.body, CII_XSD)
      if ((extra as { currency?: string }).currency === 'JPY') {
        // Yen have no minor unit: 8638 + 999 − 100 discount, shared 8638:999 → 90 and 10; tax per rate.
        assert.match(res.text, /<ram:LineTotalAmount>9637<\/ram:LineTotalAmount>/)
        assert.match(res.text, /<ram:DuePayableAmount>10471<\/ram:DuePayableAmount>/) // 8548 + 855 + 989 + 79
      }
    }
  })

  it('400 listing every missing term with its BT number, and the invoice is not counted', async () => {
    const before = await usage()
    const body = fullRequest({ format: 'xrechnung', buyer_reference: undefined, currency: undefined })
    delete body.to.vat_id
    delete body.from.phone
    body.items = [{ description: 'Service', quantity: 1, unit_price: 100, tax_category: 'AE' }]
    delete body.tax_rate
    const res = await post(`${base}/invoice`, body, { key })
    assert.equal(res.status, 400, res.text)
    for (const s of ['currency (BT-5) is required for format xrechnung', 'to.vat_id (BT-48)', 'buyer_reference (BT-10) is required for format xrechnung', 'from.phone (BT-42) is required for format xrechnung']) {
      assert.ok(res.json.error.includes(s), `missing "${s}" in ${res.json.error}`)
    }
    assert.equal(await usage(), before)
  })

  it('400 for text XML cannot carry, naming field, BT and character, and for a seller identified by a tax number only (BR-CO-26); not counted', async () => {
    const before = await usage()
    for (const format of ['ubl', 'xrechnung', 'facturx']) {
      const body = fullRequest({ format, notes: 'Danke\u0001' })
      body.from.name = 'Muster \uFFFF GmbH'
      delete body.from.vat_id
      body.from.tax_number = '12/345/67890'
      const res = await post(`${base}/invoice`, body, { key })
      assert.equal(res.status, 400, res.text)
      assert.match(res.headers.get('content-type')!, /^application\/json/)
      for (const s of [`notes (BT-22) holds U+0001 at character 6, which an e-invoice cannot carry (XML 1.0) for format ${format}`, 'from.name (BT-27) holds U+FFFF at character 8', `from.legal_id (BT-30) or from.vat_id (BT-31) is required for format ${format} (BR-CO-26`]) {
        assert.ok(res.json.error.includes(s), `missing "${s}" in ${res.json.error}`)
      }
    }
    assert.equal(await usage(), before)
  })

  it('allowances and charges through the API: XML with their totals; a bad one is a 400 naming field and BT, not counted', async () => {
    const body = fullRequest({ format: 'xrechnung', charges: [{ amount: 4.9, reason: 'Versand', reason_code: 'FC', tax_rate: 19 }] })
    body.items[0].allowances = [{ amount: 20, reason_code: '95' }]
    const res = await post(`${base}/invoice`, body, { key })
    assert.equal(res.status, 200, res.text)
    xsdValidate(res.body, CII_XSD)
    // 1180 + 39.98 + 500 = 1719.98; discount 50 over 1680 : 39.98 → 48.84, 1.16; 19 %: 1680 − 48.84 + 4.90 = 1636.06 → 310.85;
    // 7 %: 38.82 → 2.72; 1674.88 + 313.57 = 1988.45.
    assert.match(res.text, /<ram:LineTotalAmount>1719\.98<\/ram:LineTotalAmount>\s*<ram:ChargeTotalAmount>4\.90<\/ram:ChargeTotalAmount>\s*<ram:AllowanceTotalAmount>50\.00<\/ram:AllowanceTotalAmount>/)
    assert.match(res.text, /<ram:DuePayableAmount>1988\.45<\/ram:DuePayableAmount>/)
    const before = await usage()
    const bad = await post(`${base}/invoice`, { ...body, charges: [{ amount: 4.9, reason: 'Versand' }] }, { key })
    assert.equal(bad.status, 400, bad.text)
    assert.match(bad.headers.get('content-type')!, /^application\/json/)
    assert.equal(bad.json.error, 'charges[0].tax_category (BT-102) is required, or charges[0].tax_rate (BT-103) for category S or Z (BR-37)')
    assert.equal(await usage(), before)
  })

  it('400 for a VAT category and rate that do not belong together, naming the line', async () => {
    const res = await post(`${base}/invoice`, { items: [{ description: 'x', quantity: 1, unit_price: 1, tax_category: 'E', tax_rate: 19 }] }, { key })
    assert.equal(res.status, 400)
    assert.equal(res.json.error, 'items[0].tax_rate must be 0 for tax category E (BR-E-05)')
    const s = await post(`${base}/invoice`, { items: [{ description: 'x', quantity: 1, unit_price: 1, tax_category: 'S' }] }, { key })
    assert.equal(s.json.error, 'items[0].tax_rate must be > 0 for tax category S (BR-S-05)')
  })

  it('400 for a 3-decimal currency in an e-invoice (EN 16931 amounts have 2 decimals)', async () => {
    const res = await post(`${base}/invoice`, fullRequest({ format: 'ubl', currency: 'BHD' }), { key })
    assert.equal(res.status, 400)
    assert.match(res.json.error, /currency BHD has 3 decimal places; EN 16931 amounts have at most 2 \(BR-DEC-09\)/)
  })

  it('a batch takes format per row and archives .xml files; GET /invoices/{id} serves XML', async () => {
    const res = await post(`${base}/invoices/batch`, [fullRequest({ format: 'ubl' }), fullRequest({ format: 'xrechnung', invoice_number: 'RE-2' })], { key })
    assert.equal(res.status, 202, res.text)
    let status: any
    for (let i = 0; i < 300; i++) {
      status = (await get(`${base}/invoices/batch/${res.json.batch_id}`, { key })).json
      if (status.status === 'finished') break
      await new Promise((r) => setTimeout(r, 100))
    }
    assert.equal(status.status, 'finished', JSON.stringify(status))
    const zip = await get(`${base}/invoices/batch/${res.json.batch_id}/archive`, { key })
    assert.equal(zip.status, 200)
    const names = [...zip.body.toString('latin1').matchAll(/(\d{4}-[\w.-]+\.(?:xml|pdf))/g)].map((m) => m[1])
    assert.ok(names.includes('0001-RE-2026-0042.xml') && names.includes('0002-RE-2.xml'), names.join(','))
    const rowId = status.rows[0].invoice_id
    const one = await get(`${base}/invoices/${rowId}`, { key })
    assert.match(one.headers.get('content-type')!, /^application\/xml/)
    assert.equal(one.headers.get('content-disposition'), `attachment; filename="invoice-${rowId}.xml"`)
    xsdValidate(one.body, ublXsdOf(one.text))
  })
})
