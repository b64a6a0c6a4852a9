// Receiving e-invoices (docs/einvoice-receiving.md): what /invoice writes as UBL,
// XRechnung CII and Factur-X reads back as the same request with no error findings and counts once;
// a stated total that does not match its lines is a BR-CO finding; hostile or wrong input (DTDs and
// external entities, entity expansion, deep nesting, oversized bodies, PDFs without the XML,
// garbage, a wrong content type) is a 4xx JSON error, fetches nothing, and is not counted;
// compressed-stream bombs in a PDF (object stream, embedded file, nested filters, many streams)
// are a 413 while the process's peak memory stays bounded.
import assert from 'node:assert/strict'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { assertJsonError, call, get, post } from './helpers/http.ts'
import { startSystem, type TestSystem } from './helpers/system.ts'
import { account } from './helpers/invoice-batch.ts'
import { fullRequest, xsdDirForService } from './helpers/einvoice.ts'
import { pdfText } from './helpers/pdf.ts'
import { PDFDocument } from '@cantoo/pdf-lib'
import { readFileSync, writeFileSync } from 'node:fs'
import { deflateSync } from 'node:zlib'
import { spawn } from 'node:child_process'
import { readEInvoice } from '../src/invoice/receive/read-einvoice.ts'
import { ReadDeadline } from '../src/invoice/receive/read-deadline.ts'
import { MAX_READS, readInThread } from '../src/invoice/receive/read-pool.ts'
import type { HttpError } from '../src/platform/http/errors.ts'
import { xsdFindings } from '../src/invoice/receive/checks.ts'
import { until } from './helpers/wait.ts'

describe('invoice API: receiving e-invoices', () => {
  let sys: TestSystem
  let base: string
  let key: string
  const written = new Map<string, Buffer>()
  // The service's XSD check reads EINVOICE_XSD_DIR; set before the system (and its read threads)
  // starts, from the folder the other schema checks use, so CI runs the XSD tests below.
  let xsdDir: string | undefined
  const envBefore = process.env.EINVOICE_XSD_DIR

  before(async () => {
    xsdDir = xsdDirForService()
    if (xsdDir) process.env.EINVOICE_XSD_DIR = xsdDir
    sys = await startSystem({ services: ['invoice'] })
    base = sys.url.invoice!
    key = (await account(sys, 'pro')).key
    for (const format of ['ubl', 'xrechnung', 'facturx', 'pdf']) {
      const res = await post(`${base}/invoice`, fullRequest({ format }), { key })
      assert.equal(res.status, 200, res.text)
      written.set(format, res.body)
    }
  })
  after(async () => {
    await sys?.stop()
    if (envBefore === undefined) delete process.env.EINVOICE_XSD_DIR
    else process.env.EINVOICE_XSD_DIR = envBefore
  })

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

  it('a stated total that does not match the lines is a BR-CO finding; ?output=pdf still renders it (200), the stated total and the finding on the page', async () => {
    const xml = written.get('xrechnung')!.toString('utf8').replace(/<ram:GrandTotalAmount>([\d.]+)<\/ram:GrandTotalAmount>/, '<ram:GrandTotalAmount>1.00</ram:GrandTotalAmount>')
    const res = await read(xml, 'application/xml')
    assert.equal(res.status, 200, res.text)
    const f = res.json.findings.find((x: { rule: string }) => x.rule === 'BR-CO-15')
    assert.deepEqual(f && [f.severity, f.bt, f.stated, f.computed], ['error', 'BT-112', '1.00', '2006.42'], res.text)
    assert.equal(res.json.stated.totals.BT112, '1.00')
    const before = await usage()
    const pdf = await call('POST', `${base}/einvoice/read?output=pdf`, { raw: xml, key, headers: { 'content-type': 'application/xml' } })
    assert.equal(pdf.status, 200, pdf.text)
    assert.match(pdf.headers.get('content-type')!, /^application\/pdf/)
    const text = pdfText(pdf.body)
    assert.match(text, /BR-CO-15/)
    assert.match(text, /€1\.00/)
    assert.match(text, /error finding/)
    assert.equal(await usage(), before + 1)
  })

  it('XSD: an element the schema does not allow is an XSD finding (when the schemas are there)', async function () {
    if (!xsdDir) this.skip()
    const xml = written.get('ubl')!.toString('utf8').replace('<cbc:IssueDate>', '<cbc:Bogus>1</cbc:Bogus><cbc:IssueDate>')
    const res = await read(xml, 'application/xml')
    assert.equal(res.status, 200, res.text)
    assert.ok(res.json.findings.some((f: { rule: string; severity: string; message: string }) => f.rule === 'XSD' && f.severity === 'error' && /Bogus/.test(f.message)), res.text)
  })

  it('with the CPU saturated by three busy processes: a Factur-X PDF and a UBL XML still read correctly within the deadline', async () => {
    const busy = [1, 2, 3].map(() => spawn(process.execPath, ['-e', 'for(;;){}'], { stdio: 'ignore' }))
    try {
      for (const [format, type] of [['facturx', 'application/pdf'], ['ubl', 'application/xml']] as const) {
        const res = await read(written.get(format)!, type)
        assert.equal(res.status, 200, res.text)
        assert.deepEqual(res.json.findings.filter((f: { severity: string }) => f.severity !== 'info'), [])
        assert.equal(res.json.invoice.invoice_number, fullRequest().invoice_number)
        assert.deepEqual(res.json.invoice.items.map((i: any) => i.description), fullRequest().items.map((i: any) => i.description))
      }
    } finally {
      for (const c of busy) c.kill('SIGKILL')
      await until('the busy processes to end', () => busy.every((c) => c.exitCode !== null || c.signalCode !== null))
    }
  })

  it('past the read deadline: 503 with Retry-After (not a hang); an XSD check cut short is a warning, not a pass', async function () {
    await assert.rejects(readEInvoice(written.get('facturx')!, 'pdf', new ReadDeadline(0)), (err: any) => err.status === 503 && Number(err.headers['Retry-After']) > 0 && /could not be read within/.test(err.message))
    await assert.rejects(readEInvoice(written.get('ubl')!, 'xml', new ReadDeadline(0)), (err: any) => err.status === 503)
    if (!xsdDir) this.skip()
    const cut = await xsdFindings(written.get('ubl')!.toString('utf8'), 'Invoice', 1)
    assert.deepEqual(cut.map((f) => [f.rule, f.severity]), [['XSD', 'warning']], JSON.stringify(cut))
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
      // 1 MB of unclosed tags: linear now (the depth count once scanned to the end from every "<").
      assertJsonError(await read('<a'.repeat(500_000), 'application/xml'), 400, /not well-formed/)
      // One start tag of 100,000 attributes (~1 MB): refused before the parser spends seconds on it.
      assertJsonError(await read(`<Invoice ${Array.from({ length: 100_000 }, (_, i) => `a${i}="v"`).join(' ')}/>`, 'application/xml'), 400, /tag is longer than/)
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

    it('a PDF with several XMLs none of the documented names: 400 naming them; with factur-x.xml and the legacy ZUGFeRD-invoice.xml: factur-x.xml read; a compressed-stream bomb: 413', async () => {
      const before = await usage()
      const xml = Buffer.from(ubl())
      assertJsonError(await read(await pdfWith([['a.xml', xml], ['b.xml', xml]]), 'application/pdf'), 400, /several invoice XML files \(a\.xml, b\.xml\)/)
      // ZUGFeRD 2 writers embed both names: the documented order reads factur-x.xml (the other is garbage here, so reading it would fail).
      const both = await read(await pdfWith([['ZUGFeRD-invoice.xml', Buffer.from('<not-an-invoice/>')], ['factur-x.xml', xml]]), 'application/pdf')
      assert.equal(both.status, 200, both.text)
      assert.equal(both.json.attachment, 'factur-x.xml')
      assert.equal(await usage(), before + 1)
      const legacyOnly = await read(await pdfWith([['ZUGFeRD-invoice.xml', xml], ['other.xml', Buffer.from('<x/>')]]), 'application/pdf')
      assert.equal(legacyOnly.status, 200, legacyOnly.text)
      assert.equal(legacyOnly.json.attachment, 'ZUGFeRD-invoice.xml')
      // 16 MB of blanks (twice the cap) compress to about 16 KB: inflating stops at the cap.
      const bomb = await pdfWith([['factur-x.xml', Buffer.alloc(16 * 1024 * 1024, 0x20)]])
      assert.ok(bomb.length < 1024 * 1024, `bomb is ${bomb.length} bytes`)
      assertJsonError(await read(bomb, 'application/pdf'), 413, /inflates to more than/)
      // One XML among other attachments is read.
      const ok = await read(await pdfWith([['factur-x.xml', xml], ['terms.pdf', Buffer.from('%PDF-1.4')]]), 'application/pdf')
      assert.equal(ok.status, 200, ok.text)
      assert.equal(await usage(), before + 3)
    })

    it('a 2 MB document of 262,144 elements is parsed off the event loop: requests sent meanwhile are answered before it', async () => {
      const before = await usage()
      const xml = `<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2">${'<b>1</b>'.repeat(256 * 1024)}</Invoice>`
      let readDone = false
      const reading = read(xml, 'application/xml').finally(() => {
        readDone = true
      })
      // Its parse takes seconds (~1 s quiet, 3 s at load 14). Had it run on the API's event loop,
      // only requests answered while the 2 MB were uploaded (a few ms) would count here.
      let answeredWhileReading = 0
      while (!readDone) {
        const r = await get(`${base}/usage`, { key })
        assert.equal(r.status, 200)
        if (!readDone) answeredWhileReading++
        await new Promise((res) => setTimeout(res, 20))
      }
      assertJsonError(await reading, 400, /no invoice lines/)
      assert.ok(answeredWhileReading > 5, `${answeredWhileReading} requests were answered while the document was read`)
      assert.equal(await usage(), before)
    })

    it('a read still parsing when it must stop has its thread ended: 503, and the next read works', async () => {
      const xml = Buffer.from(`<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2">${'<b>1</b>'.repeat(256 * 1024)}</Invoice>`)
      // The thread's own deadline is far away, so only the stop from outside can end this read.
      await assert.rejects(readInThread(xml, 'xml', { deadlineMs: 60_000, hardStopMs: 300 }), (err: HttpError) => {
        assert.equal(err.status, 503)
        assert.match(err.message, /could not be read within/)
        return true
      })
      const ok = await read(written.get('ubl')!, 'application/xml')
      assert.equal(ok.status, 200, ok.text)
    })

    it('more reads than the thread and its queue take (1 + 32) are refused at once with 503 (Retry-After 5), and the next read works', async () => {
      const xml = Buffer.from(`<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2">${'<b>1</b>'.repeat(256 * 1024)}</Invoice>`)
      // Each stops from outside after 1 s at most: the whole test is bounded whatever the load.
      const outcomes = await Promise.all(
        Array.from({ length: 40 }, () =>
          readInThread(xml, 'xml', { deadlineMs: 60_000, hardStopMs: 1_000 }).then(
            () => 'read',
            (err: HttpError) => {
              if (err.status === 400) return 'read' // the parse finished within its second: no invoice lines
              assert.equal(err.status, 503, String(err))
              assert.equal(err.headers?.['Retry-After'], '5')
              return /Too many e-invoices/.test(err.message) ? 'refused' : /could not be read within/.test(err.message) ? 'stopped' : err.message
            },
          ),
        ),
      )
      const count = (o: string) => outcomes.filter((x) => x === o).length
      assert.equal(count('refused'), 40 - MAX_READS, `refused at once: ${count('refused')} (${[...new Set(outcomes)].join(', ')})`)
      assert.equal(count('refused') + count('stopped') + count('read'), 40)
      const ok = await read(written.get('ubl')!, 'application/xml')
      assert.equal(ok.status, 200, ok.text)
    })

    it('compressed-stream bombs in a PDF: 413 for each, and the peak RSS grows by less than 200 MB', async () => {
      const before = await usage()
      const gig = zerosBomb(1024 ** 3)
      const objStm = (filter: string, data: Buffer, n = 3) => `${n} 0 obj\n<< /Type /ObjStm /N 0 /First 0 /Filter ${filter} /Length ${data.length} >>\nstream\n`
      // The peak RSS of this process (the API runs in it) is reset, so what the bombs add is measured.
      const peakReset = resetPeakRss()
      const rssBefore = rssKb('VmRSS')
      // An object stream (pdf-lib decodes these while parsing) of 1 GB of zeros in ~6.5 MB.
      assertJsonError(await read(pdfOf([[objStm('/FlateDecode', gig), gig]]), 'application/pdf'), 413, /inflate to more than \d+ bytes \(at the object stream\)/)
      // The invoice XML itself, as an embedded file.
      const spec = '3 0 obj\n<< /Type /Filespec /F (factur-x.xml) /UF (factur-x.xml) /EF << /F 4 0 R >> >>\nendobj\n'
      const embedded = pdfOf([[`${spec}4 0 obj\n<< /Type /EmbeddedFile /Filter /FlateDecode /Length ${gig.length} >>\nstream\n`, gig]])
      assertJsonError(await read(embedded, 'application/pdf'), 413, /embedded file factur-x\.xml inflates to more than 8388608 bytes/)
      // Nested: the 1 GB stream deflated once more, in ~10 KB, behind two FlateDecode filters.
      const twice = deflateSync(gig)
      assert.ok(twice.length < 100_000, `nested bomb is ${twice.length} bytes`)
      assertJsonError(await read(pdfOf([[objStm('[/FlateDecode /FlateDecode]', twice), twice]]), 'application/pdf'), 413, /inflate to more than/)
      // Many streams, each small: the budget is per request, not per stream (8 × 8 MB; N 0: the
      // ones inflated within the budget are valid, empty object streams).
      const eight = zerosBomb(8 * 1024 * 1024)
      assertJsonError(await read(pdfOf(Array.from({ length: 8 }, (_, i) => [objStm('/FlateDecode', eight, 3 + i), eight])), 'application/pdf'), 413, /inflate to more than/)
      // LZW and RunLength expand without a cap: refused by name.
      assertJsonError(await read(pdfOf([[objStm('/LZWDecode', eight), eight]]), 'application/pdf'), 400, /LZWDecode/)
      if (peakReset) {
        const grown = rssKb('VmHWM') - rssBefore
        assert.ok(grown < 200 * 1024, `peak RSS grew by ${Math.round(grown / 1024)} MB`)
      }
      assert.equal(await usage(), before)
    })
  })
})

/** A zlib stream of n zero bytes (rounded to 1 + a multiple of 258), written by hand: a fixed-Huffman
 *  block of one literal 0 and then length-258, distance-1 copies, ~13 bits per 258 bytes. */
function zerosBomb(n: number): Buffer {
  const copies = Math.floor((n - 1) / 258)
  const out = Buffer.alloc(Math.ceil((11 + copies * 13 + 7) / 8) + 6)
  out[0] = 0x78
  out[1] = 0x01
  let pos = 2
  let acc = 0
  let bits = 0
  const put = (bit: number) => {
    acc |= bit << bits
    if (++bits === 8) {
      out[pos++] = acc
      acc = 0
      bits = 0
    }
  }
  const huffman = (code: number, len: number) => {
    for (let i = len - 1; i >= 0; i--) put((code >> i) & 1)
  }
  put(1) // BFINAL
  put(1) // BTYPE 01 (fixed Huffman), least significant bit first
  put(0)
  huffman(0x30, 8) // literal 0
  for (let i = 0; i < copies; i++) {
    huffman(0xc5, 8) // length 258 (code 285)
    huffman(0, 5) // distance 1
  }
  huffman(0, 7) // end of block
  if (bits > 0) out[pos++] = acc
  const adler = ((((1 + copies * 258) % 65521) << 16) | 1) >>> 0
  out.writeUInt32BE(adler, pos)
  return out.subarray(0, pos + 4)
}

/** A PDF of a catalog, an empty page tree and the given objects, each an opening and its stream data. */
function pdfOf(objects: [string, Buffer][]): Buffer {
  const parts: Buffer[] = [Buffer.from('%PDF-1.7\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n2 0 obj\n<< /Type /Pages /Kids [] /Count 0 >>\nendobj\n')]
  for (const [head, data] of objects) parts.push(Buffer.from(head), data, Buffer.from('\nendstream\nendobj\n'))
  parts.push(Buffer.from('trailer\n<< /Root 1 0 R /Size 20 >>\n%%EOF\n'))
  return Buffer.concat(parts)
}

const rssKb = (field: 'VmRSS' | 'VmHWM'): number => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(readFileSync('/proc/self/status', 'utf8'))![1])

/** Linux resets the peak RSS (VmHWM) to the current one on "5" written to clear_refs. */
function resetPeakRss(): boolean {
  try {
    writeFileSync('/proc/self/clear_refs', '5')
    return rssKb('VmHWM') <= rssKb('VmRSS') + 1024
  } catch {
    return false
  }
}
