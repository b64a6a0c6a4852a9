// Parsed fonts shared between documents. PDFKit (under pdfmake) makes a new fontkit font from an
// embedded font's bytes for every document, and fontkit then decodes that font's tables again on
// first use, its OpenType layout tables (GSUB/GPOS, read on every text measurement) most of all:
// ~40 % of a Factur-X render, which embeds Noto Sans (PDF/A requires every font embedded). Here
// the font files this service registers are parsed once per thread, and each document's PDFKit
// font is pointed at that parsed font. PDFKit still keeps its own per-document subset and layout
// cache, so every PDF embeds exactly the glyphs it uses, as before.
//
// The hook is pdfmake's PDFDocument.provideFont (the one place pdfmake turns a font file name into
// a PDFKit font): fontkit's own create() export cannot be replaced (a non-configurable getter).
//
// The standard fonts (Helvetica, the default invoice's font) are shared too: see sharedAfm below.
import { createRequire } from 'node:module'

interface FontkitFont {
  createSubset(): unknown
}
interface PdfkitFont {
  font?: FontkitFont
  subset?: unknown
  layoutCache?: Record<string, unknown>
}
interface PdfmakeDocument {
  fontCache: Record<string, Record<string, PdfkitFont> | undefined>
  getFontType(bold: boolean, italics: boolean): string
  getFontFile(family: string, bold: boolean, italics: boolean): unknown
  provideFont(family: string, bold: boolean, italics: boolean): PdfkitFont
}

const require = createRequire(import.meta.url)
const fontkit = require('fontkit') as { create(buffer: Uint8Array): FontkitFont }
const proto = (require('pdfmake/js/PDFDocument') as { default: { prototype: PdfmakeDocument } }).default.prototype

/** Font file name (as in pdfmake's font descriptors) → the font parsed once. */
const parsed = new Map<string, FontkitFont>()

/** Parse these font files once per thread; documents naming them reuse the parsed fonts. */
export function shareParsedFonts(files: Record<string, Uint8Array>): void {
  for (const [name, bytes] of Object.entries(files)) if (!parsed.has(name)) parsed.set(name, fontkit.create(bytes))
}

let reuses = 0

// PDFKit lays out (shapes) every word through fontkit's OpenType tables and caches the result per
// document: with an embedded font that is most of a Factur-X render's text measurement, and an
// invoice's labels, names, amounts and descriptions mostly repeat from one document to the next.
// A layout depends only on the font and the word, and PDFKit copies a cached layout before it
// changes anything (word spacing), so each parsed font keeps one word cache for every document
// of the thread. It is started afresh when it passes MAX_WORDS, checked every CHECK_EVERY documents:
// a word's layout is ~1 KB (a position object per glyph), so at most a few MB per font and thread.
const MAX_WORDS = 5_000
const CHECK_EVERY = 200
const layouts = new Map<string, { words: Record<string, unknown>; docs: number }>()

function sharedLayouts(file: string): Record<string, unknown> {
  let entry = layouts.get(file)
  if (!entry) layouts.set(file, (entry = { words: Object.create(null) as Record<string, unknown>, docs: 0 }))
  if (++entry.docs % CHECK_EVERY === 0 && Object.keys(entry.words).length > MAX_WORDS) entry.words = Object.create(null) as Record<string, unknown>
  return entry.words
}

/** How many words' layouts the thread keeps for a font file (for tests). */
export function sharedLayoutWords(file: string): number {
  const entry = layouts.get(file)
  return entry ? Object.keys(entry.words).length : 0
}

/** How many document fonts were served from a shared parsed font in this thread (for tests). */
export function sharedFontReuses(): number {
  return reuses
}

const provideFont = proto.provideFont
proto.provideFont = function (this: PdfmakeDocument, family: string, bold: boolean, italics: boolean): PdfkitFont {
  const known = this.fontCache[family]?.[this.getFontType(bold, italics)]
  const font = provideFont.call(this, family, bold, italics)
  if (known) return font
  const file = this.getFontFile(family, bold, italics)
  const shared = typeof file === 'string' ? parsed.get(file) : undefined
  // A new PDFKit font has just parsed the bytes again (cheap: fontkit decodes tables lazily, and
  // none of the costly ones yet); it measures and subsets with the shared font from here on.
  if (shared && font.font && font.font !== shared) {
    font.font = shared
    font.subset = shared.createSubset()
    if (font.layoutCache) font.layoutCache = sharedLayouts(file as string)
    reuses++
  }
  return font
}

// PDFKit parses a standard font's metrics file (Helvetica.afm: widths and ~2,700 kerning pairs, by
// regular expressions) anew for every document that uses the font: ~5 ms of a 20-line invoice's
// ~20 ms, and much of its garbage. The parsed tables are only read afterwards (widths, kerning,
// bounding boxes), so each thread parses each metrics text once and every later font object of that
// text takes the same tables. The file is still read per document (PDFKit's own code, not
// reachable): a Map lookup by its text costs a hash and one comparison. The AFM parser class is not
// exported by PDFKit: it is taken from the font of a throwaway document.
interface AfmTables {
  attributes: unknown
  glyphWidths: unknown
  boundingBoxes: unknown
  kernPairs: unknown
}
type AfmFont = AfmTables & { parse(contents: string): void }
const PdfkitDocument = require('pdfkit') as new (opts: object) => { font(name: string): unknown; _font: { font: AfmFont } }
const afmProto = (() => {
  const probe = new PdfkitDocument({ autoFirstPage: false })
  probe.font('Helvetica')
  return Object.getPrototypeOf(probe._font.font) as AfmFont
})()
const parseAfm = afmProto.parse
const sharedAfm = new Map<string, AfmTables>()
afmProto.parse = function (this: AfmFont, contents: string): void {
  const known = sharedAfm.get(contents)
  if (known) {
    this.attributes = known.attributes
    this.glyphWidths = known.glyphWidths
    this.boundingBoxes = known.boundingBoxes
    this.kernPairs = known.kernPairs
    return
  }
  parseAfm.call(this, contents)
  sharedAfm.set(contents, { attributes: this.attributes, glyphWidths: this.glyphWidths, boundingBoxes: this.boundingBoxes, kernPairs: this.kernPairs })
}

/** How many standard-font metrics texts this thread has parsed (for tests). */
export function sharedAfmFonts(): number {
  return sharedAfm.size
}
