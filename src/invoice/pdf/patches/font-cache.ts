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
// No byte of a PDF changes (test/invoice-pdf-fast-paths.test.ts compares standard-font and
// embedded-font renders with stock pdfmake's; test/invoice-font-cache.test.ts shows the sharing).
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { requireInternal, type PatchTarget } from './patched-versions.ts'

interface FontkitGlyph {
  codePoints: number[]
}
interface FontkitFont {
  createSubset(): unknown
  getGlyph(id: number, characters?: number[]): FontkitGlyph | null
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
const proto = (requireInternal(require, 'pdfmake/js/PDFDocument') as { default?: { prototype: PdfmakeDocument } } | undefined)?.default?.prototype

/** Font file name (as in pdfmake's font descriptors) → the font parsed once. */
const parsed = new Map<string, FontkitFont>()

/** Parse these font files once per thread; documents naming them reuse the parsed fonts. */
export function shareParsedFonts(files: Record<string, Uint8Array>): void {
  for (const [name, bytes] of Object.entries(files)) if (!parsed.has(name)) parsed.set(name, keepCodePoints(fontkit.create(bytes)))
}

/**
 * fontkit keeps one glyph object per glyph id for the font's life, with the characters of the call
 * that made it. Subsetting a composite glyph (Ü, É, ά …) makes its components (U, E, α …) without
 * characters; in a font parsed per document that happens only after the document's text was
 * shaped, but a shared font carries such a glyph into later documents, whose ToUnicode map then
 * had no text for it (copy, search and pdftotext lost those letters). A glyph made without
 * characters takes those of the first call that has them, as it would in a fresh font; .notdef
 * (glyph 0) is left alone, since PDFKit makes it without characters before any text (stock does too).
 */
function keepCodePoints(font: FontkitFont): FontkitFont {
  const getGlyph = font.getGlyph
  font.getGlyph = function (this: FontkitFont, id: number, characters: number[] = []) {
    const glyph = getGlyph.call(this, id, characters)
    if (glyph && id !== 0 && glyph.codePoints.length === 0 && characters.length > 0) glyph.codePoints = characters
    return glyph
  }
  return font
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

const provideFont = proto?.provideFont
const provideSharedFont = function (this: PdfmakeDocument, family: string, bold: boolean, italics: boolean): PdfkitFont {
  const known = this.fontCache[family]?.[this.getFontType(bold, italics)]
  const font = provideFont!.call(this, family, bold, italics)
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
// text takes the same tables. The AFM parser class is not exported by PDFKit: it is taken from the
// font of a throwaway document.
interface AfmTables {
  attributes: unknown
  glyphWidths: unknown
  boundingBoxes: unknown
  kernPairs: Record<string, number>
  kernRows: KernRows
}
/** Left glyph → right glyph → kerning: the pairs of `kernPairs` ("left\0right" keys) by glyph. */
type KernRows = Record<string, Record<string, number> | undefined>
type AfmFont = AfmTables & { parse(contents: string): void; getKernPair(left: string, right: string | undefined): number }
const PdfkitDocument = require('pdfkit') as new (opts: object) => { font(name: string): unknown; _font?: { font?: AfmFont } }
const afmProto = (() => {
  const probe = new PdfkitDocument({ autoFirstPage: false })
  probe.font('Helvetica')
  const font = probe._font?.font
  return font ? (Object.getPrototypeOf(font) as AfmFont) : undefined
})()
const parseAfm = afmProto?.parse
const sharedAfm = new Map<string, AfmTables>()
const parseOnce = function (this: AfmFont, contents: string): void {
  const known = sharedAfm.get(contents)
  if (known) {
    this.attributes = known.attributes
    this.glyphWidths = known.glyphWidths
    this.boundingBoxes = known.boundingBoxes
    this.kernPairs = known.kernPairs
    this.kernRows = known.kernRows
    return
  }
  parseAfm!.call(this, contents)
  this.kernRows = kernRowsOf(this.kernPairs)
  sharedAfm.set(contents, { attributes: this.attributes, glyphWidths: this.glyphWidths, boundingBoxes: this.boundingBoxes, kernPairs: this.kernPairs, kernRows: this.kernRows })
}

// PDFKit looks a kerning pair up by a key it builds for every pair of neighbouring glyphs of every
// string it measures or draws (`left + '\0' + right`: a new string, hashed, then a lookup in a
// dictionary of ~2,700 keys): ~1 ms of a 20-line invoice. The same pairs by left glyph answer
// with two lookups and build nothing. Same answers: a glyph name holds no NUL (AFM names are
// words), and a missing pair (or the last glyph's, `right` undefined) is 0 either way.
function kernRowsOf(pairs: Record<string, number>): KernRows {
  const rows: KernRows = Object.create(null)
  for (const key in pairs) {
    const cut = key.indexOf('\0')
    const left = key.slice(0, cut)
    const row = (rows[left] ??= Object.create(null) as Record<string, number>)
    row[key.slice(cut + 1)] = pairs[key]!
  }
  return rows
}
const kernPairByRow = function (this: AfmFont, left: string, right: string | undefined): number {
  const row = this.kernRows[left]
  return (row !== undefined && right !== undefined && row[right]) || 0
}

// PDFKit reads a standard font's metrics file for every document (`fs.readFileSync` of its
// data/*.afm, in code of its own that nothing can reach): ~0.3 ms per invoice, and a new ~70 KB
// string that the lookup above must hash and compare in full. Those files are part of the
// installed package and never change while it runs, so this thread reads each of them once; the
// same string then finds its tables at once. Every other read goes to fs untouched.
const fs = require('node:fs') as { readFileSync: (...args: unknown[]) => unknown }
const afmDir = join(dirname(require.resolve('pdfkit')), 'data')
const afmTexts = new Map<string, string>()
const readFileSync = fs.readFileSync
const readAfmOnce = function (this: unknown, ...args: unknown[]): unknown {
  const [path, options] = args
  if (options === 'utf8' && typeof path === 'string' && path.endsWith('.afm') && dirname(path) === afmDir) {
    let text = afmTexts.get(path)
    if (text === undefined) afmTexts.set(path, (text = readFileSync.apply(this, args) as string))
    return text
  }
  return readFileSync.apply(this, args)
}

/** How many standard-font metrics texts this thread has parsed (for tests). */
export function sharedAfmFonts(): number {
  return sharedAfm.size
}

/** What these patches replace, call or read: checked before anything is patched (patched-versions.ts). */
export const fontCacheTargets: PatchTarget[] = [
  { dependency: 'pdfmake', owner: 'PDFDocument.prototype', object: proto, methods: ['provideFont', 'getFontType', 'getFontFile'], patch: 'font-cache.ts' },
  { dependency: 'fontkit', owner: 'fontkit', object: fontkit, methods: ['create'], patch: 'font-cache.ts' },
  // PDFKit's standard-font metrics parser, a class PDFKit does not export (reached as doc._font.font).
  { dependency: 'pdfkit', owner: 'AFMFont.prototype', object: afmProto, methods: ['parse', 'getKernPair'], files: ['Helvetica.afm', 'Helvetica-Bold.afm'].map((f) => join(afmDir, f)), patch: 'font-cache.ts' },
]

/**
 * Replace pdfmake's PDFDocument.prototype.provideFont, PDFKit's AFMFont.prototype.parse and
 * getKernPair, and node:fs readFileSync for PDFKit's metrics files (once, by installPatches).
 */
export function installFontCache(): void {
  proto!.provideFont = provideSharedFont
  afmProto!.parse = parseOnce
  afmProto!.getKernPair = kernPairByRow
  fs.readFileSync = readAfmOnce
}
