// Fonts embedded in invoice PDFs are parsed once per render thread and shared by every document
// (src/invoice/pdf/patches/font-cache.ts): the documents use the shared font, and each still embeds only the
// glyphs it prints (its own subset), so what one invoice prints never leaks into another. The
// standard fonts' metrics (Helvetica) are parsed once per thread too, and change no byte of a PDF.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { sharedAfmFonts, sharedFontReuses, sharedLayoutWords } from '../src/invoice/pdf/patches/font-cache.ts'
import { renderInvoicePdf } from '../src/invoice/pdf/thread-render-pdf.ts'
import { invoiceBodySchema } from '../src/invoice/invoice-schema.ts'
import { pdfFonts } from './helpers/einvoice.ts'
import { pdfText, qpdfCheck } from './helpers/pdf.ts'

const request = (description: string) => invoiceBodySchema.parse({ invoice_number: 'F-1', date: '2026-11-02', items: [{ description, quantity: 1, unit_price: 10 }] })
const render = (description: string) => renderInvoicePdf(request(description), { today: '2026-11-02', embedFonts: true })
// The creation date and the file ID derived from it differ between renders; everything else of
// these PDFs is a function of the request.
const withoutDate = (pdf: Buffer) => pdf.toString('latin1').replace(/\(D:[^)]*\)/g, '').replace(/\/ID \[<[0-9a-f]+> <[0-9a-f]+>\]/gi, '')

describe('invoice fonts: parsed once per thread, subset per document', () => {
  it('documents with embedded fonts use the shared parsed font', async () => {
    const before = sharedFontReuses()
    await render('Consulting')
    await render('Consulting')
    // Regular and bold in each of the two documents.
    assert.ok(sharedFontReuses() - before >= 4, `shared fonts used ${sharedFontReuses() - before} times`)
  })

  it('word layouts are shared between documents: a word shaped once is not shaped again, and a later document prints the same', async () => {
    const fonts = () => sharedLayoutWords('NotoSans-Regular.ttf') + sharedLayoutWords('NotoSans-Bold.ttf')
    const first = await render('Quixotic zephyr')
    const known = fonts()
    assert.ok(known > 0, 'the rendered words are kept')
    await render('Quixotic zephyr')
    assert.equal(fonts(), known, 'the same words again add nothing')
    await render('Quixotic zephyr jumbled')
    assert.ok(fonts() > known, 'a new word is added')
    // Justified and wrapped text of another document in between changes nothing of this one.
    await renderInvoicePdf(invoiceBodySchema.parse({ invoice_number: 'F-2', date: '2026-11-02', notes: 'Quixotic zephyr '.repeat(40), items: [{ description: 'Quixotic', quantity: 1, unit_price: 10 }] }), { today: '2026-11-02', embedFonts: true })
    assert.equal(withoutDate(await render('Quixotic zephyr')), withoutDate(first))
  })

  it('the shared word layouts are bounded: past 5,000 words a font starts a fresh cache', async function () {
    this.timeout(120_000)
    const words = () => sharedLayoutWords('NotoSans-Regular.ttf')
    // 6 documents of 1,000 new words each take the regular font's cache past 5,000 …
    for (let d = 0; d < 6; d++) {
      const notes = Array.from({ length: 1_000 }, (_, i) => `w${d}x${i}q`).join(' ')
      await renderInvoicePdf(invoiceBodySchema.parse({ invoice_number: `B-${d}`, date: '2026-11-02', notes, items: [{ description: 'Ł', quantity: 1, unit_price: 10 }] }), { today: '2026-11-02', embedFonts: true })
    }
    assert.ok(words() > 5_000, `${words()} words kept`)
    // … and within the next 200 documents (it is checked every 200) it is started afresh.
    for (let d = 0; d < 200 && words() > 5_000; d++) await render('Łódź')
    assert.ok(words() < 100, `${words()} words kept after the reset`)
  })

  it('each PDF embeds its own subset: a document rendered after one with many more glyphs is byte for byte the same', async () => {
    const first = await render('Consulting')
    const wide = await render('Łódź Ærøskøbing Ελληνικά Кириллица ŞĞİ ÀÉÎÕÜ ₹₺₽ ½¾ ©®™')
    const again = await render('Consulting')
    for (const pdf of [first, wide, again]) {
      qpdfCheck(pdf)
      assert.deepEqual(pdfFonts(pdf).filter((f) => !f.embedded), [])
    }
    assert.match(pdfText(wide), /Łódź Ærøskøbing Ελληνικά Кириллица/)
    assert.ok(wide.length > first.length + 2_000, `the wide subset is larger (${wide.length} vs ${first.length} bytes)`)
    assert.equal(withoutDate(again), withoutDate(first))
  })

  it('a letter first met as part of an accented one (a component glyph) keeps its text in later documents', async () => {
    // Ü, É, Ö and ά are composite glyphs: subsetting them makes U, E, O and α without characters.
    // Letters never shaped before in this thread, so the composites come first (Ǘ/Ǜ: U below them).
    await render('Ǘǜ Ḗ Ṏ ᾶ')
    const later = await render('UNUSUAL ETUDE OBOE αβ')
    assert.match(pdfText(later), /UNUSUAL ETUDE OBOE αβ/)
  })

  it('standard-font metrics are parsed once per thread, and a Helvetica PDF is byte for byte what stock pdfmake makes', async function () {
    this.timeout(30_000)
    const plain = invoiceBodySchema.parse({
      invoice_number: 'H-1', date: '2026-11-02', tax_rate: 20, discount: 5, notes: 'AVATAR Wave Toyota 1,234.50',
      items: [{ description: 'Kerning: AV, To, Wa, Yo', quantity: 3, unit_price: 19.99 }, { description: 'Second line', quantity: 1, unit_price: 100 }],
    })
    await renderInvoicePdf(plain, { today: '2026-11-02' })
    const parsed = sharedAfmFonts()
    assert.ok(parsed >= 2, `regular and bold metrics kept (${parsed})`)
    const ours = await renderInvoicePdf(plain, { today: '2026-11-02' })
    assert.equal(sharedAfmFonts(), parsed, 'a second document parses nothing again')
    // The same document definition through pdfmake alone, in a process that never loads font-cache.ts.
    const script = `
      import pdfmake from 'pdfmake'
      import { buildInvoiceDocument } from './src/invoice/pdf/document.ts'
      import { pdfmakeFonts, READABLE_FONT_FILES } from './src/invoice/pdf/fonts.ts'
      const { doc, base } = buildInvoiceDocument(JSON.parse(process.argv[1]), { today: '2026-11-02' })
      pdfmake.setUrlAccessPolicy(() => false)
      pdfmake.setLocalAccessPolicy((path) => READABLE_FONT_FILES.includes(path))
      pdfmake.setFonts(pdfmakeFonts(base))
      process.stdout.write((await pdfmake.createPdf(doc).getBuffer()).toString('base64'))`
    const stock = Buffer.from(execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script, JSON.stringify(plain)], { encoding: 'utf8', timeout: 25_000 }), 'base64')
    assert.match(pdfText(stock), /Kerning: AV, To, Wa, Yo/)
    assert.equal(withoutDate(ours), withoutDate(stock))
  })
})
