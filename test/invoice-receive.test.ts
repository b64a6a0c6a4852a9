// Receiving e-invoices (docs/einvoice.md, "Receiving e-invoices"): what /invoice writes as UBL,
// XRechnung CII and Factur-X reads back as the same request with no error findings and counts once;
// a stated total that does not match its lines is a BR-CO finding; hostile or wrong input (DTDs and
// external entities, entity expansion, deep nesting, oversized bodies, PDFs without the XML,
// garbage, a wrong content type) is a 4xx JSON error, fetches nothing, and is not counted.
import assert from 'node:assert/strict'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { assertJsonError, call, get, post } from './helpers/http.ts'
import { startSystem, type TestSystem } from './helpers/system.ts'
import { account } from './helpers/invoice-batch.ts'
import { fullRequest } from './helpers/einvoice.ts'
import { pdfText } from './helpers/pdf.ts'
import { PDFDocument } from '@cantoo/pdf-lib'

describe('invoice API: receiving e-invoices', () => {
  let sys: TestSystem
  let base: string
  let key: string
  const written = new Map<string, Buffer>()

  before(async () => {
    sys = await startSystem({ services: ['invoice'] })
    base = sys.url.invoice!
    key = (await account(sys, 'pro')).key
    for (const format of ['ubl', 'xrechnung', 'facturx', 'pdf']) {
      const res = await post(`${base}/invoice`, fullRequest({ format }), { key })
      assert.equal(res.status, 200, res.text)
      written.set(format, res.body)
    }
  })
  after(async () => sys?.stop())

  const usage = async () => (await get(`${base}/usage`, { key })).json.invoices_this_month as number
  const read = (body: string | Buffer, type: string, k = key) => call('POST', `${base}/einvoice/read`, { raw: body, key: k || undefined, headers: { 'content-type': type } })

  for (const [format, type] of [['ubl', 'application/xml'], ['xrechnung', 'text/xml'], ['facturx', 'application/pdf']] as const) {
    it(`${format}: read back as the request that wrote it, no error findings, counted once`, async () => {
      const before = await usage()
      const res = await read(written.get(format)!, type)
      assert.equal(res.status, 200, res.text)
      assert.deepEqual(res.json.findings.filter((f: { severity: string }) => f.severity === 'error'), [])
      const inv = res.json.invoice
      const sent = fullRequest()
      assert.equal(inv.format, format)
      assert.equal(inv.invoice_number, sent.invoice_number)
      assert.equal(inv.date, sent.date)
      assert.equal(inv.due_date, sent.due_date)
      assert.equal(inv.currency, 'EUR')
      assert.equal(inv.buyer_reference, sent.buyer_reference)
      assert.equal(inv.from.name, sent.from.name)
      assert.equal(inv.from.vat_id, sent.from.vat_id)
      assert.equal(inv.to.city, sent.to.city)
      assert.equal(inv.payment.iban, 'DE89370400440532013000')
      assert.deepEqual(inv.items.map((i: any) => [i.description, i.quantity, i.tax_rate]), sent.items.map((i: any) => [i.description, i.quantity, i.tax_rate ?? 19]))
      assert.equal(await usage(), before + 1)
      // The answer posts back to /invoice as it is.
      const again = await post(`${base}/invoice`, inv, { key })
      assert.equal(again.status, 200, again.text)
    })
  }

  it('?output=pdf&locale=de: a readable German PDF of the received XRechnung, counted once', async () => {
    const before = await usage()
    const res = await call('POST', `${base}/einvoice/read?output=pdf&locale=de`, { raw: written.get('xrechnung')!, key, headers: { 'content-type': 'application/xml' } })
    assert.equal(res.status, 200, res.text)
    assert.match(res.headers.get('content-type')!, /^application\/pdf/)
    assert.equal(res.headers.get('content-disposition'), 'attachment; filename="received-RE-2026-0042.pdf"')
    const text = pdfText(res.body)
    assert.match(text, /RECHNUNG/)
    assert.match(text, /Muster GmbH/)
    assert.match(text, /2\.006,42/) // the total the XML states, in German notation
    assert.equal(await usage(), before + 1)
    assertJsonError(await call('POST', `${base}/einvoice/read?output=html`, { raw: written.get('xrechnung')!, key, headers: { 'content-type': 'application/xml' } }), 400)
    assert.equal(await usage(), before + 1)
  })

  it('a stated total that does not match the lines is a BR-CO finding', async () => {
    const xml = written.get('xrechnung')!.toString('utf8').replace(/<ram:GrandTotalAmount>([\d.]+)<\/ram:GrandTotalAmount>/, '<ram:GrandTotalAmount>1.00</ram:GrandTotalAmount>')
    const res = await read(xml, 'application/xml')
    assert.equal(res.status, 200, res.text)
    assert.ok(res.json.findings.some((f: { rule: string }) => f.rule === 'BR-CO-15'), res.text)
  })

  it('XSD: an element the schema does not allow is an XSD finding (when EINVOICE_XSD_DIR is set)', async function () {
    if (!process.env.EINVOICE_XSD_DIR) this.skip()
    const xml = written.get('ubl')!.toString('utf8').replace('<cbc:IssueDate>', '<cbc:Bogus>1</cbc:Bogus><cbc:IssueDate>')
    const res = await read(xml, 'application/xml')
    assert.equal(res.status, 200, res.text)
    assert.ok(res.json.findings.some((f: { rule: string; severity: string; message: string }) => f.rule === 'XSD' && f.severity === 'error' && /Bogus/.test(f.message)), res.text)
  })

  describe('hostile and wrong input: 4xx, nothing fetched, not counted', () => {
    let target: Server
    let hits = 0
    let targetUrl: string
    before(async () => {
      target = createServer((_req, res) => {
        hits++
        res.end('<x>leak</x>')
      })
      await new Promise<void>((r) => target.listen(0, '127.0.0.1', r))
      targetUrl = `http://127.0.0.1:${(target.address() as AddressInfo).port}/entity`
    })
    after(() => new Promise<void>((r) => target.close(() => r())))

    const ubl = () => written.get('ubl')!.toString('utf8')
    const withDoctype = (decl: string, ref: string) => ubl().replace(/<\?xml[^>]*\?>/, `<?xml version="1.0"?>\n${decl}`).replace('<cbc:Note>', `<cbc:Note>${ref}`)

    it('XXE to a local HTTP server and to file:///etc/passwd, billion laughs: 400, 0 requests, no leak', async () => {
      const before = await usage()
      const laughs = '<!DOCTYPE Invoice [<!ENTITY a "lol"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;"><!ENTITY d "&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;">]>'
      for (const body of [
        withDoctype(`<!DOCTYPE Invoice [<!ENTITY xxe SYSTEM "${targetUrl}">]>`, '&xxe;'),
        withDoctype('<!DOCTYPE Invoice [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>', '&xxe;'),
        withDoctype(`<!DOCTYPE Invoice SYSTEM "${targetUrl}">`, ''),
        withDoctype(laughs, '&d;'),
      ]) {
        const res = await read(body, 'application/xml')
        assertJsonError(res, 400, /DTD/)
        assert.doesNotMatch(res.text, /root:/)
      }
      assert.equal(hits, 0)
      assert.equal(await usage(), before)
    })

    it('deep nesting, garbage, no lines, empty body: 400; oversized: 413; wrong type or encoding: 415', async () => {
      const before = await usage()
      assertJsonError(await read('<a>'.repeat(5_000) + '</a>'.repeat(5_000), 'application/xml'), 400, /nested deeper/)
      assertJsonError(await read(Buffer.from([0, 159, 146, 150, 255]), 'application/xml'), 400)
      assertJsonError(await read('<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"><ID>1</ID></Invoice>', 'application/xml'), 400, /no invoice lines/)
      assertJsonError(await read('<html><body/></html>', 'application/xml'), 400, /Not an e-invoice/)
      assertJsonError(await read('', 'application/xml'), 400, /empty/)
      assertJsonError(await read(Buffer.alloc(11 * 1024 * 1024, 0x20), 'application/xml'), 413)
      assertJsonError(await read(ubl(), 'application/json'), 415)
      assertJsonError(await call('POST', `${base}/einvoice/read`, { raw: ubl(), key, headers: { 'content-type': 'application/xml', 'content-encoding': 'gzip' } }), 415)
      assertJsonError(await read(ubl(), 'application/xml', ''), 401)
      assert.equal(await usage(), before)
    })

    it('a PDF without an embedded XML, and bytes that are no PDF: 400', async () => {
      const before = await usage()
      assertJsonError(await read(written.get('pdf')!, 'application/pdf'), 400, /no embedded files/)
      assertJsonError(await read(Buffer.from('%PDF-1.7\n garbage garbage'), 'application/pdf'), 400, /not a readable PDF/)
      assertJsonError(await read(Buffer.from('GIF89a garbage'), 'application/pdf'), 400, /not a PDF/)
      assert.equal(await usage(), before)
    })

    /** A one-page PDF embedding the given files (pdf-lib compresses them with FlateDecode). */
    async function pdfWith(files: [string, Buffer][]): Promise<Buffer> {
      const doc = await PDFDocument.create()
      doc.addPage()
      for (const [name, bytes] of files) await doc.attach(bytes, name, { mimeType: 'text/xml' })
      return Buffer.from(await doc.save())
    }

    it('a PDF with several invoice XMLs: 400 naming them; a compressed-stream bomb: 413', async () => {
      const before = await usage()
      const xml = Buffer.from(ubl())
      assertJsonError(await read(await pdfWith([['factur-x.xml', xml], ['xrechnung.xml', xml]]), 'application/pdf'), 400, /several invoice XML files \(factur-x\.xml, xrechnung\.xml\)/)
      // 16 MB of blanks (twice the cap) compress to about 16 KB: inflating stops at the cap.
      const bomb = await pdfWith([['factur-x.xml', Buffer.alloc(16 * 1024 * 1024, 0x20)]])
      assert.ok(bomb.length < 1024 * 1024, `bomb is ${bomb.length} bytes`)
      assertJsonError(await read(bomb, 'application/pdf'), 413, /inflates to more than/)
      // One XML among other attachments is read.
      const ok = await read(await pdfWith([['factur-x.xml', xml], ['terms.pdf', Buffer.from('%PDF-1.4')]]), 'application/pdf')
      assert.equal(ok.status, 200, ok.text)
      assert.equal(await usage(), before + 1)
    })
  })
})
