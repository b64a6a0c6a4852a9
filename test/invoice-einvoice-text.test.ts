// Text in e-invoices (docs/einvoice.md, "Text in e-invoices"): a character XML 1.0 cannot carry is
// a 400 naming the field and its business term; everything else comes out as well-formed XML that
// validates against its schema. Unit level: the request goes through the route's own parser
// (parseOrThrow with invoiceBodySchema) and the render threads' renderEInvoice; xmllint checks the
// outputs in batches.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import fc from 'fast-check'
import { XMLParser } from 'fast-xml-parser'
import { renderEInvoice } from '../src/invoice/einvoice/einvoice-render.ts'
import { renderInvoicePdf } from '../src/invoice/pdf/thread-render-pdf.ts'
import { invoiceBodySchema, type InvoiceRequest } from '../src/invoice/invoice-schema.ts'
import { CII_XSD, fullRequest, pdfAttachments, pdfXmp, UBL_INVOICE_XSD, xsdValidate, refusalOf } from './helpers/einvoice.ts'
import { pdfText } from './helpers/pdf.ts'

const TODAY = '2026-11-02'

/** Every text field of the request, by path, with the business term the 400 must name ('' for fields outside the XML). */
const FIELDS: [string, string][] = [
  ['invoice_number', 'BT-1'], ['notes', 'BT-22'], ['buyer_reference', 'BT-10'], ['order_reference', 'BT-13'],
  ['preceding_invoice_number', 'BT-25'], ['tax_exemption_reason', 'BT-120'], ['date', 'BT-2'], ['due_date', 'BT-9'],
  ['from.name', 'BT-27'], ['from.street', 'BT-35'], ['from.additional_street', 'BT-36'],
  ['from.city', 'BT-37'], ['from.postal_code', 'BT-38'], ['from.country', 'BT-40'], ['from.legal_id', 'BT-30'],
  ['from.vat_id', 'BT-31'], ['from.tax_number', 'BT-32'], ['from.peppol_id', 'BT-34'], ['from.email', 'BT-43'],
  ['from.contact', 'BT-41'], ['from.phone', 'BT-42'], ['from.address', ''],
  ['to.name', 'BT-44'], ['to.street', 'BT-50'], ['to.additional_street', 'BT-51'],
  ['to.city', 'BT-52'], ['to.postal_code', 'BT-53'], ['to.country', 'BT-55'], ['to.legal_id', 'BT-47'],
  ['to.vat_id', 'BT-48'], ['to.peppol_id', 'BT-49'], ['to.email', 'BT-49'], ['to.phone', ''], ['to.address', ''],
  ['payment.account_name', 'BT-85'], ['payment.reference', 'BT-83'], ['payment.terms', 'BT-20'], ['payment.bic', 'BT-86'],
  ['payment.iban', 'BT-84'], ['currency', 'BT-5'], ['items[0].unit', 'BT-130'],
  ['items[0].description', 'BT-153'], ['items[1].description', 'BT-153'], ['footer', ''], ['payment_info', ''], ['currency_symbol', ''],
]

function getPath(body: unknown, path: string): unknown {
  return path.replace(/\[(\d+)\]/g, '.$1').split('.').reduce<any>((o, k) => o?.[k], body)
}

function setPath(body: Record<string, any>, path: string, value: string): void {
  const keys = path.replace(/\[(\d+)\]/g, '.$1').split('.')
  let o = body
  for (const k of keys.slice(0, -1)) o = o[k]
  o[keys.at(-1)!] = value
}

/** XML 1.0's Char production (§2.2), written independently of the service's check. */
function xmlCarries(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const u = s.charCodeAt(i)
    if (u >= 0xd800 && u <= 0xdbff) {
      const next = s.charCodeAt(i + 1)
      if (!(next >= 0xdc00 && next <= 0xdfff)) return false
      i++
      continue
    }
    if (u >= 0xdc00 && u <= 0xdfff) return false
    if (u < 0x20 && u !== 0x9 && u !== 0xa && u !== 0xd) return false
    if (u === 0xfffe || u === 0xffff) return false
  }
  return true
}

const HOSTILE = ['&nbsp;', '&#0;', '&#x1;', '\u0000', '\u0001', '\u0008', '\u000B', '\u000C', '\u001F', '\t', '\r', '\r\n', '\n', '\u007F', '\u0085', '\u0080', '\u009F', '\uD800', '\uDFFF', '\uFFFE', '\uFFFF', '\uFDD0', '\u{1FFFE}', '\u{10FFFF}', '\uFEFF', '\u200F', '<', '&', ']]>', '"', "'", '&amp;', '\u{1F600}', 'ß', '丼', 'ش', 'א']
const text = fc.oneof(
  fc.string({ unit: 'binary', minLength: 1, maxLength: 12 }),
  fc.array(fc.oneof(fc.constantFrom(...HOSTILE), fc.string({ unit: 'grapheme', minLength: 1, maxLength: 4 })), { minLength: 1, maxLength: 6 }).map((a) => a.join('')),
  // Mostly valid text with one hostile character, the case a real client sends.
  fc.tuple(fc.constantFrom('Muster GmbH', 'Rechnung 7', 'Zürich'), fc.constantFrom(...HOSTILE)).map(([a, b]) => `${a}${b}x`),
)

const XSD = { ubl: UBL_INVOICE_XSD, xrechnung: CII_XSD, facturx: CII_XSD } as const
type XmlFormat = keyof typeof XSD

interface Written { xml: Buffer; xmp?: Buffer; format: XmlFormat; fields: Record<string, string> }

/** xmllint over many files at once: the files it finds wrong (well-formedness or, with a schema, validity). */
function xmllintFailures(files: string[], xsd?: string): Map<string, string> {
  if (!files.length) return new Map()
  const args = ['--noout', '--nonet', ...(xsd ? ['--schema', xsd] : []), ...files]
  let stderr = ''
  try {
    execFileSync('xmllint', args, { stdio: 'pipe', maxBuffer: 64 << 20 })
  } catch (err) {
    stderr = (err as { stderr?: Buffer }).stderr?.toString() ?? String(err)
  }
  const out = new Map<string, string>()
  for (const f of files) {
    const lines = stderr.split('\n').filter((l) => l.startsWith(f))
    if (lines.some((l) => !l.endsWith(' validates'))) out.set(f, lines.join('\n'))
  }
  return out
}

describe('e-invoice text: what XML 1.0 cannot carry is refused, everything else validates', () => {
  let visiblePdf: Buffer

  before(async () => {
    // The XML inside Factur-X does not depend on the visible PDF: one rendering serves every run.
    visiblePdf = await renderInvoicePdf(invoiceBodySchema.parse(fullRequest({ format: 'facturx' })), { today: TODAY, embedFonts: true })
  })

  async function write(req: InvoiceRequest): Promise<{ xml: Buffer; xmp?: Buffer }> {
    const facturx = req.format === 'facturx'
    const out = await renderEInvoice(req, { today: TODAY, ...(facturx ? { pdf: visiblePdf } : {}) })
    return facturx ? { xml: pdfAttachments(out).get('factur-x.xml')!, xmp: pdfXmp(out) } : { xml: out }
  }

  it('property: any Unicode text in any field is a 400 naming a field it was put in, or XML and XMP valid against their schemas', async function () {
    this.timeout(120_000)
    const seed = Number(process.env.FC_SEED ?? Date.now() % 2 ** 31)
    const written: Written[] = []
    const arb = fc.record({
      format: fc.constantFrom<XmlFormat>('ubl', 'xrechnung', 'xrechnung', 'facturx'),
      fields: fc.uniqueArray(fc.constantFrom(...FIELDS), { minLength: 1, maxLength: 4, selector: ([p]) => p }).chain((fs) =>
        fc.tuple(...fs.map(([p, bt]) => text.map((v) => [p, bt, v] as const))),
      ),
    })
    let refused = 0
    await fc.assert(
      fc.asyncProperty(arb, async ({ format, fields }) => {
        const body = fullRequest({ format })
        for (const [p, , v] of fields) setPath(body, p, v)
        const message = refusalOf(body)
        // (A schema field trims whitespace, form feed and vertical tab included, before it is checked.)
        const unwritable = fields.filter(([, bt, v]) => bt && !xmlCarries(v.trim()))
        if (message === null) {
          // Accepted: what the service kept of each value (schema fields trim whitespace) is text XML carries.
          const req = invoiceBodySchema.parse(body)
          assert.deepEqual(fields.filter(([p, bt]) => bt && !xmlCarries(String(getPath(req, p) ?? ''))).map(([p]) => p), [], 'text XML cannot carry was accepted')
          const out = await write(req)
          written.push({ ...out, format, fields: Object.fromEntries(fields.map(([p, , v]) => [p, v])) })
          return
        }
        refused++
        assert.ok(fields.some(([p]) => message.includes(p)), `the 400 names none of ${fields.map(([p]) => p)}: ${message}`)
        // Once the request's shape is right, the one message lists every field holding what XML
        // cannot carry, with its business term (a shape problem, reported first, can hide them).
        if (message.includes(`for format ${format}`)) {
          for (const [p, bt] of unwritable) assert.ok(message.includes(`${p} (${bt})`), `${p} not named with ${bt}: ${message}`)
        }
      }),
      { numRuns: Number(process.env.FC_RUNS ?? 60), seed },
    ).catch((err) => {
      throw new Error(`FC_SEED=${seed}: ${(err as Error).message}\n${((err as Error).cause as Error | undefined)?.message ?? ''}`)
    })

    // Every written document checked in a few xmllint runs (one per schema), not one per document.
    const dir = mkdtempSync(join(tmpdir(), 'qw-einv-prop-'))
    const files = written.map((w, i) => {
      const xml = join(dir, `${i}.xml`)
      writeFileSync(xml, w.xml)
      let xmp: string | undefined
      if (w.xmp) writeFileSync((xmp = join(dir, `${i}.xmp.xml`)), w.xmp)
      return { xml, xmp }
    })
    const failures = new Map<string, string>()
    for (const format of ['ubl', 'xrechnung', 'facturx'] as const) {
      const mine = files.filter((_, i) => written[i]!.format === format).map((f) => f.xml)
      for (const [f, why] of xmllintFailures(mine, XSD[format])) failures.set(f, why)
    }
    for (const [f, why] of xmllintFailures(files.flatMap((f) => (f.xmp ? [f.xmp] : [])))) failures.set(f, why)
    const report = [...failures].map(([f, why]) => {
      const w = written[Number(f.split('/').at(-1)!.split('.')[0])]!
      return `${w.format} ${JSON.stringify(w.fields)}\n${why}`
    })
    assert.deepEqual(report, [], `FC_SEED=${seed}: documents xmllint rejects`)

    // The XMP says what was sent: the seller's name, as an XML parser reads it back.
    const parser = new XMLParser({ ignoreAttributes: true, processEntities: true, trimValues: false, parseTagValue: false })
    for (const [i, w] of written.entries()) {
      if (!w.xmp || !('from.name' in w.fields)) continue
      const producer = /<pdf:Producer>([\s\S]*?)<\/pdf:Producer>/.exec(w.xmp.toString('utf8'))![0]
      const read = parser.parse(producer)['pdf:Producer']
      assert.equal(String(read ?? ''), w.fields['from.name']!.replace(/\r\n?/g, '\n'), `FC_SEED=${seed}: XMP of document ${i}`)
    }
    assert.ok(written.length > 5 && refused > 5, `both outcomes exercised (${written.length} written, ${refused} refused)`)
  })

  describe('examples', () => {
    const cases: [string, string, string][] = [
      ['U+0001', 'Muster\u0001GmbH', 'U+0001 at character 7'],
      ['U+0000', '\u0000', 'U+0000 at character 1'],
      ['U+000B', 'a\u000Bb', 'U+000B at character 2'],
      ['U+001F', 'a\u001F', 'U+001F at character 2'],
      ['a lone high surrogate', 'a\uD800b', 'U+D800 (a lone surrogate) at character 2'],
      ['a lone low surrogate', '\uDC00', 'U+DC00 (a lone surrogate) at character 1'],
      ['U+FFFE', 'a\uFFFE', 'U+FFFE at character 2'],
      ['U+FFFF', '\uFFFF', 'U+FFFF at character 1'],
      ['DEL', 'a\u007F', 'U+007F at character 2'],
      ['a C1 control (€ read as Latin-1)', '100 \u0080', 'U+0080 at character 5'],
      ['U+0085', 'a\u0085', 'U+0085 at character 2'],
      ['a noncharacter U+FDD0', '\uFDD0', 'U+FDD0 at character 1'],
      ['a plane-end noncharacter U+1FFFE, counted as one character', '😀\u{1FFFE}', 'U+1FFFE at character 2'],
    ]
    for (const format of ['ubl', 'xrechnung', 'facturx'] as const) {
      for (const [what, value, found] of cases) {
        it(`${format}: ${what} in from.name is a 400 naming from.name (BT-27) and the character`, () => {
          const message = refusalOf(fullRequest({ format, from: { ...fullRequest().from, name: value } }))
          assert.ok(message?.includes(`from.name (BT-27) holds ${found}, which an e-invoice cannot carry (XML 1.0) for format ${format}`), String(message))
        })
      }
    }

    it('one 400 names every field that holds such a character, with the other problems of the request', () => {
      const body = fullRequest({ format: 'xrechnung', notes: 'a\u0002', buyer_reference: '\uFFFF', payment: { ...fullRequest().payment, terms: 'x\u0003' } })
      body.items[1].description = 'Book\u0000'
      body.to.city = '\uDFFF'
      delete body.from.phone
      const message = refusalOf(body)!
      for (const named of ['notes (BT-22) holds U+0002', 'buyer_reference (BT-10) holds U+FFFF', 'payment.terms (BT-20) holds U+0003', 'items[1].description (BT-153) holds U+0000', 'to.city (BT-52) holds U+DFFF', 'from.phone (BT-42) is required']) {
        assert.ok(message.includes(named), `${named} not in: ${message}`)
      }
    })

    it('tab, line breaks, emoji, right-to-left text and markup are written, CR and CRLF as LF', async () => {
      const notes = 'Zeile 1\r\nZeile 2\rZeile 3\n\teingerückt 😀 شكرا <b>&amp;</b>'
      for (const format of ['ubl', 'xrechnung'] as const) {
        const body = fullRequest({ format, notes })
        assert.equal(refusalOf(body), null)
        const { xml } = await write(invoiceBodySchema.parse(body))
        xsdValidate(xml, XSD[format])
        assert.ok(!xml.includes('\r'), 'no CR in the XML')
        const read = execFileSync('xmllint', ['--xpath', 'string(//*[local-name()="Note" or local-name()="Content"][1])', '-'], { input: xml }).toString('utf8').replace(/\n$/, '') // xmllint ends its output with a newline
        assert.equal(read, 'Zeile 1\nZeile 2\nZeile 3\n\teingerückt 😀 شكرا <b>&amp;</b>')
      }
    })

    it('an unknown currency with a discount is a 400 naming currency, not an error (found by the property)', () => {
      for (const body of [fullRequest({ format: 'ubl', currency: ' ' }), { items: [{ description: 'x', quantity: 1, unit_price: 10 }], currency: 'eur', discount: 1 }]) {
        assert.equal(refusalOf(body), 'currency must be an ISO 4217 currency code such as EUR')
      }
    })

    it('the plain pdf format takes the same text: it draws text and writes no XML', async () => {
      const hostile = 'Muster\u0001 \uD800\uFFFF GmbH'
      const body = { items: [{ description: `Beratung ${hostile}`, quantity: 1, unit_price: 100 }], from: { name: hostile }, notes: hostile, invoice_number: 'RE-7' }
      assert.equal(refusalOf(body), null)
      const pdf = await renderInvoicePdf(invoiceBodySchema.parse(body), { today: TODAY })
      assert.match(pdfText(pdf), /Beratung/)
      // The same request as an e-invoice is refused.
      assert.match(refusalOf(fullRequest({ format: 'ubl', notes: hostile }))!, /notes \(BT-22\) holds U\+0001/)
    })
  })
})
