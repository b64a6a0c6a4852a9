// The faster paths this service puts into pdfmake and PDFKit (src/invoice/pdf/: style-lookup.ts,
// color-ops.ts, and the kerning and metrics-file reuse of font-cache.ts) change no byte of a PDF:
// documents that exercise each of them — named styles that extend others (and a cycle), hex,
// short-hex, named, RGB and CMYK colours for fill and stroke, the three standard font families
// with their kerning, tables and lines, several pages — rendered here (with them) and by stock
// pdfmake in a process that never loads them, compared byte for byte.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import pdfmake from 'pdfmake'
import '../src/invoice/pdf/render.ts'
import { pdfmakeFonts, READABLE_FONT_FILES } from '../src/invoice/pdf/fonts.ts'
import { richInvoice, STANDARD_FONTS, styledDocument } from './helpers/pdf-fast-paths-docs.ts'
import { pdfText } from './helpers/pdf.ts'

// The creation date and the file ID derived from it differ between renders.
const withoutDate = (pdf: Buffer) => pdf.toString('latin1').replace(/\(D:[^)]*\)/g, '').replace(/\/ID \[<[0-9a-f]+> <[0-9a-f]+>\]/gi, '')

type Which = 'styled' | 'invoice'
const FONTS: Record<Which, Record<string, Record<string, string>>> = { styled: STANDARD_FONTS, invoice: pdfmakeFonts('Helvetica') }
const fontNames = (which: Which) => Object.values(FONTS[which]).flatMap((f) => Object.values(f))

async function ours(which: Which): Promise<Buffer> {
  pdfmake.setFonts(FONTS[which])
  return (await pdfmake.createPdf((which === 'styled' ? styledDocument() : richInvoice()) as never).getBuffer()) as Buffer
}

/** The same definition through stock pdfmake, in a process that loads nothing of ours but the builders. */
function stock(which: Which): Buffer {
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
    process.stdout.write((await pdfmake.createPdf(doc).getBuffer()).toString('base64'))`
  return Buffer.from(execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script, which], { encoding: 'utf8', timeout: 40_000 }), 'base64')
}

describe('invoice PDF: the faster pdfmake and PDFKit paths change no byte', function () {
  this.timeout(60_000)
  // Times and Courier are not fonts invoices use: readable for these documents only.
  before(() => pdfmake.setLocalAccessPolicy((path: string) => READABLE_FONT_FILES.includes(path) || fontNames('styled').includes(path)))
  after(() => pdfmake.setLocalAccessPolicy((path: string) => READABLE_FONT_FILES.includes(path)))

  it('styles with extends and cycles, every colour form, three standard families with kerning, tables, lines, several pages', async () => {
    const mine = await ours('styled')
    const again = await ours('styled') // a second document: every table and cache already warm
    const theirs = stock('styled')
    assert.match(pdfText(theirs), /Courier bold: AVATAR Wave/)
    assert.match(pdfText(theirs), /Row 69/)
    assert.equal(withoutDate(mine), withoutDate(theirs))
    assert.equal(withoutDate(again), withoutDate(theirs))
  })

  it('a German invoice with adjustments over several pages, as the service builds it', async () => {
    const mine = await ours('invoice')
    const theirs = stock('invoice')
    assert.match(pdfText(theirs), /Müller & Söhne GmbH/)
    assert.equal(withoutDate(mine), withoutDate(theirs))
  })
})
