// The faster paths this service puts into pdfmake and PDFKit (src/invoice/pdf/patches/:
// style-lookup.ts, color-ops.ts, and the shared fonts, word layouts, kerning and metrics files of
// font-cache.ts) change no byte of a PDF: documents that exercise each of them — named styles that
// extend others (and a cycle), hex, short-hex, named, RGB and CMYK colours for fill and stroke, the
// three standard font families with their kerning, tables and lines, several pages, and the
// embedded fonts of the Factur-X output (Latin, CJK, Greek, Cyrillic, bold) — rendered here (with
// them) and by stock pdfmake in a process that never loads them, compared byte for byte.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import pdfmake from 'pdfmake'
import { createRequire } from 'node:module'
import { renderInvoicePdf } from '../src/invoice/pdf/thread-render-pdf.ts'
import { renderInvoiceOutput } from '../src/invoice/pdf/thread-render-output.ts'
import { installPatches } from '../src/invoice/pdf/patches/install-patches.ts'
import { sharedFontReuses, sharedLayoutWords } from '../src/invoice/pdf/patches/font-cache.ts'
import { pdfmakeFonts, READABLE_FONT_FILES } from '../src/invoice/pdf/fonts.ts'
import { embeddedFontRequests, richInvoice, STANDARD_FONTS, styledDocument } from './helpers/pdf-fast-paths-docs.ts'
import { pdfFonts } from './helpers/einvoice.ts'
import { pdfText } from './helpers/pdf.ts'

// The creation date and the file ID derived from it differ between renders.
const withoutDate = (pdf: Buffer) => pdf.toString('latin1').replace(/\(D:[^)]*\)/g, '').replace(/\/ID \[<[0-9a-f]+> <[0-9a-f]+>\]/gi, '')
// A Factur-X PDF also prints the time of its making in its XMP metadata.
const withoutTimes = (pdf: Buffer) => withoutDate(pdf).replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)/g, '')
const TODAY = '2026-11-02'

type Which = 'styled' | 'invoice'
const FONTS: Record<Which, Record<string, Record<string, string>>> = { styled: STANDARD_FONTS, invoice: pdfmakeFonts('Helvetica') }
const fontNames = (which: Which) => Object.values(FONTS[which]).flatMap((f) => Object.values(f))

/** The three patched methods' source, as a process runs them (a stock process must not run ours). */
const PATCHED_SOURCES = `
    const req = (await import('node:module')).createRequire(process.cwd() + '/')
    const patched = [
      req('pdfmake/js/StyleContextStack').default.prototype.getProperty,
      req('pdfmake/js/PDFDocument').default.prototype.provideFont,
      req('pdfkit').prototype._setColorCore,
    ].map(String)`
const require = createRequire(import.meta.url)
const ourSources = () => [
  (require('pdfmake/js/StyleContextStack') as { default: { prototype: object } }).default.prototype,
  (require('pdfmake/js/PDFDocument') as { default: { prototype: object } }).default.prototype,
  (require('pdfkit') as { prototype: object }).prototype,
].map((proto, i) => String((proto as Record<string, unknown>)[['getProperty', 'provideFont', '_setColorCore'][i]!]))

async function ours(which: Which): Promise<Buffer> {
  pdfmake.setFonts(FONTS[which])
  return (await pdfmake.createPdf((which === 'styled' ? styledDocument() : richInvoice()) as never).getBuffer()) as Buffer
}

/** The same definition through stock pdfmake, in a process that loads nothing of ours but the builders. */
function stock(which: Which): { pdf: Buffer; patched: string[] } {
  const script = `
    import pdfmake from 'pdfmake'
    import { richInvoice, STANDARD_FONTS, styledDocument } from './test/helpers/pdf-fast-paths-docs.ts'
    import { pdfmakeFonts } from './src/invoice/pdf/fonts.ts'
    const which = process.argv[1]
    const fonts = which === 'styled' ? STANDARD_FONTS : pdfmakeFonts('Helvetica')
    const names = Object.values(fonts).flatMap((f) => Object.values(f))
    pdfmake.setUrlAccessPolicy(() => false)
    pdfmake.setLocalAccessPolicy((path) => names.includes(path))
    pdfmake.setFonts(fonts)
    const doc = which === 'styled' ? styledDocument() : richInvoice()
    const pdf = (await pdfmake.createPdf(doc).getBuffer()).toString('base64')
    ${PATCHED_SOURCES}
    process.stdout.write(JSON.stringify({ pdf, patched }))`
  const out = JSON.parse(execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script, which], { encoding: 'utf8', timeout: 40_000 })) as { pdf: string; patched: string[] }
  return { pdf: Buffer.from(out.pdf, 'base64'), patched: out.patched }
}

/** This process runs the patched methods, the stock process pdfmake's and PDFKit's own. */
function assertStock(patched: string[]): void {
  const ours = ourSources()
  assert.equal(patched.length, ours.length)
  for (const [i, source] of ours.entries()) assert.notEqual(patched[i], source, 'one side ran pdfmake and PDFKit unpatched, the other patched')
}

/**
 * The embedded-font requests through stock pdfmake (the fonts in its virtual file system, as the
 * service loads them), and the Factur-X output the e-invoice step makes of each of those PDFs.
 */
function stockEmbedded(): { pdfs: Buffer[]; facturx: Buffer[]; patched: string[] } {
  const script = `
    import pdfmake from 'pdfmake'
    import { embeddedFontRequests } from './test/helpers/pdf-fast-paths-docs.ts'
    import { buildInvoiceDocument } from './src/invoice/pdf/document.ts'
    import { embeddedFontFiles, pdfmakeFonts, READABLE_FONT_FILES } from './src/invoice/pdf/fonts.ts'
    import { renderEInvoice } from './src/invoice/einvoice/einvoice-render.ts'
    pdfmake.setUrlAccessPolicy(() => false)
    pdfmake.setLocalAccessPolicy((path) => READABLE_FONT_FILES.includes(path))
    for (const [name, bytes] of Object.entries(embeddedFontFiles())) pdfmake.virtualfs.writeFileSync(name, bytes)
    const pdfs = [], facturx = []
    for (const req of embeddedFontRequests()) {
      const { doc, base } = buildInvoiceDocument(req, { today: '${TODAY}', embedFonts: true })
      pdfmake.setFonts(pdfmakeFonts(base))
      const pdf = await pdfmake.createPdf(doc).getBuffer()
      pdfs.push(pdf.toString('base64'))
      facturx.push((await renderEInvoice(req, { today: '${TODAY}', pdf })).toString('base64'))
    }
    ${PATCHED_SOURCES}
    process.stdout.write(JSON.stringify({ pdfs, facturx, patched }))`
  const out = JSON.parse(execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8', timeout: 60_000, maxBuffer: 64 << 20 })) as { pdfs: string[]; facturx: string[]; patched: string[] }
  return { pdfs: out.pdfs.map((b) => Buffer.from(b, 'base64')), facturx: out.facturx.map((b) => Buffer.from(b, 'base64')), patched: out.patched }
}

describe('invoice PDF: the faster pdfmake and PDFKit paths change no byte', function () {
  this.timeout(60_000)
  // As a render thread does when it starts (thread-entry.ts).
  before(() => installPatches())
  // Times and Courier are not fonts invoices use: readable for these documents only.
  before(() => pdfmake.setLocalAccessPolicy((path: string) => READABLE_FONT_FILES.includes(path) || fontNames('styled').includes(path)))
  after(() => pdfmake.setLocalAccessPolicy((path: string) => READABLE_FONT_FILES.includes(path)))

  it('styles with extends and cycles, every colour form, three standard families with kerning, tables, lines, several pages', async () => {
    const mine = await ours('styled')
    const again = await ours('styled') // a second document: every table and cache already warm
    const { pdf: theirs, patched } = stock('styled')
    assertStock(patched)
    assert.match(pdfText(theirs), /Courier bold: AVATAR Wave/)
    assert.match(pdfText(theirs), /Row 69/)
    assert.equal(withoutDate(mine), withoutDate(theirs))
    assert.equal(withoutDate(again), withoutDate(theirs))
  })

  it('a German invoice with adjustments over several pages, as the service builds it', async () => {
    const mine = await ours('invoice')
    const { pdf: theirs, patched } = stock('invoice')
    assertStock(patched)
    assert.match(pdfText(theirs), /Müller & Söhne GmbH/)
    assert.equal(withoutDate(mine), withoutDate(theirs))
  })

  it('the embedded fonts of the Factur-X output: Latin, CJK, Greek, Cyrillic, bold, several pages, the PDF and the Factur-X file made of it', async function () {
    this.timeout(120_000)
    const requests = embeddedFontRequests()
    const reuses = sharedFontReuses()
    const mine: Buffer[] = []
    const myFacturx: Buffer[] = []
    // In order: the last request repeats the first with every shared font and word layout warm.
    for (const req of requests) {
      mine.push(await renderInvoicePdf(req, { today: TODAY, embedFonts: true }))
      myFacturx.push(await renderInvoiceOutput(req, { today: TODAY }))
    }
    assert.ok(sharedFontReuses() > reuses, 'the shared parsed fonts were used')
    assert.ok(sharedLayoutWords('NotoSans-Regular.ttf') > 0, 'the shared word layouts were used')
    const theirs = stockEmbedded()
    assertStock(theirs.patched)
    assert.match(pdfText(theirs.pdfs[0]!), /保守サービス/)
    assert.match(pdfText(theirs.pdfs[0]!), /Ελληνικά Кириллица/)
    assert.deepEqual(pdfFonts(theirs.pdfs[0]!).filter((f) => !f.embedded), [])
    assert.equal(theirs.pdfs.length, requests.length)
    for (let i = 0; i < requests.length; i++) {
      assert.equal(withoutDate(mine[i]!), withoutDate(theirs.pdfs[i]!), `embedded-font PDF ${i}`)
      assert.equal(withoutTimes(myFacturx[i]!), withoutTimes(theirs.facturx[i]!), `Factur-X ${i}`)
    }
  })
})
