// Factur-X XMP metadata (docs/einvoice.md, "Factur-X metadata"): the packet is UTF-8, well-formed,
// and says exactly what was sent, for German, French, CJK and right-to-left names and for text
// that would be markup once cut to bytes. Also watches the library: @e-invoice-eu/core 2.3.4 cuts
// each UTF-16 unit to a byte, which einvoice-render.ts undoes; once a release writes UTF-8 itself
// the last test fails, and the patch must go (it would encode twice).
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { XMLParser } from 'fast-xml-parser'
import { libraryAddMetadata, renderEInvoice } from '../src/invoice/einvoice/einvoice-render.ts'
import { renderInvoicePdf } from '../src/invoice/pdf/thread-render-pdf.ts'
import { invoiceBodySchema } from '../src/invoice/invoice-schema.ts'
import { FormatFactoryService } from '@e-invoice-eu/core'
import { fullRequest, pdfXmp } from './helpers/einvoice.ts'

const TODAY = '2026-11-02'
const parser = new XMLParser({ ignoreAttributes: true, processEntities: true, trimValues: false, parseTagValue: false, isArray: (name) => name === 'rdf:Description' })

async function facturx(name: string, invoiceNumber = 'RE-2026-0042'): Promise<Buffer> {
  const req = invoiceBodySchema.parse(fullRequest({ format: 'facturx', invoice_number: invoiceNumber, from: { ...fullRequest().from, name } }))
  const pdf = await renderInvoicePdf(req, { today: TODAY, embedFonts: true })
  return renderEInvoice(req, { today: TODAY, pdf })
}

/** The packet's fields as an XML parser reads them. */
function readXmp(xmp: Buffer): { creator: string; producer: string; title: string } {
  const rdf = parser.parse(xmp.toString('utf8'))['x:xmpmeta']['rdf:RDF']['rdf:Description'] as Record<string, any>[]
  const dc = rdf.find((d) => 'dc:creator' in d)!
  return {
    creator: String(dc['dc:creator']['rdf:Seq']['rdf:li']),
    title: String(dc['dc:title']['rdf:Alt']['rdf:li']),
    producer: String(rdf.find((d) => 'pdf:Producer' in d)!['pdf:Producer']),
  }
}

describe('Factur-X XMP metadata: UTF-8, escaped, what was sent', () => {
  const names: [string, string][] = [
    ['German umlauts and an ampersand', 'Meyer & Söhne Bäckerei GmbH'],
    ['French accents', 'Société Générale d’Électricité Œuvre'],
    ['CJK', '株式会社山田商事 北京有限公司'],
    ['Arabic (right to left)', 'شركة النور للتجارة'],
    ['Hebrew (right to left) with a mark', 'חברת אור בע"מ \u200F'],
    ['the markup that a byte cut used to make', 'Muster 丼evil 丯举'],
    ['markup and entities', '<pdf:Producer>x</pdf:Producer> ]]> &amp; &nbsp; &#38; &'],
    ['an emoji (outside the BMP)', 'Café 😀 𝔘𝔫𝔦𝔠𝔬𝔡𝔢'],
  ]
  for (const [what, name] of names) {
    it(`${what}: the XMP is well-formed UTF-8 and names the seller exactly`, async () => {
      const xmp = pdfXmp(await facturx(name, `RE-${what.length}`))
      // UTF-8: a strict decoder takes every byte, and the packet header's BOM is the 3 UTF-8 bytes.
      const text = new TextDecoder('utf-8', { fatal: true }).decode(xmp)
      assert.ok(xmp.includes(Buffer.from('begin="\xEF\xBB\xBF"', 'latin1')), 'the xpacket BOM is U+FEFF in UTF-8')
      execFileSync('xmllint', ['--noout', '-'], { input: xmp })
      const read = readXmp(xmp)
      assert.equal(read.creator, name)
      assert.equal(read.producer, name)
      assert.ok(read.title.includes(name) && read.title.includes(`RE-${what.length}`), read.title)
      assert.ok(!/<evil/.test(text), 'no markup from the name')
    })
  }

  it("the library (2.3.4) still writes the packet one byte per UTF-16 unit: when this fails, remove the patch in einvoice-render.ts", async () => {
    let proto = Object.getPrototypeOf(new FormatFactoryService().createFormatService('Factur-X-EN16931', { log() {}, warn() {}, error() {} })) as { addMetadata: unknown }
    while (!Object.prototype.hasOwnProperty.call(proto, 'addMetadata')) proto = Object.getPrototypeOf(proto)
    const patched = proto.addMetadata
    proto.addMetadata = libraryAddMetadata
    let xmp: Buffer
    try {
      xmp = pdfXmp(await facturx('Söhne 丼evil 丯举'))
    } finally {
      proto.addMetadata = patched
    }
    // ö (U+00F6) as the single byte F6, 丼/丯/举 as "<", "/", ">": not UTF-8, and markup.
    assert.throws(() => new TextDecoder('utf-8', { fatal: true }).decode(xmp))
    assert.ok(xmp.includes(Buffer.from('<pdf:Producer>S\xF6hne <evil /></pdf:Producer>', 'latin1')), xmp.toString('latin1').slice(0, 2000))
  })
})
