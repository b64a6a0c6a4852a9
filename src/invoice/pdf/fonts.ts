// Font choice for invoices. The standard Helvetica is fastest (no embedding) but only covers
// WinAnsi; anything else is printed with embedded Noto Sans, and CJK text with Noto Sans SC,
// chosen per text run by real glyph coverage, so no character ever prints as garbage.
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import * as fontkit from 'fontkit'

const require = createRequire(import.meta.url)
// The packages export only their JS entry (dist/); the font files sit in ../fonts beside it.
const fontDir = (pkg: string) => join(dirname(require.resolve(pkg)), '..', 'fonts')
const latinDir = fontDir('@embedpdf/fonts-latin')
const scDir = fontDir('@embedpdf/fonts-sc')

export type FontName = 'Helvetica' | 'NotoSans' | 'NotoSansSC'

// CP1252 beyond Latin-1: the characters Helvetica can print in the 0x80–0x9F range.
const WIN_ANSI_EXTRA = new Set([...'€‚ƒ„…†‡ˆ‰Š‹ŒŽ‘’“”•–—˜™š›œžŸ'].map((c) => c.codePointAt(0)!))

export function isWinAnsi(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c === 10) continue
    if ((c >= 0x20 && c <= 0x7e) || (c >= 0xa0 && c <= 0xff) || WIN_ANSI_EXTRA.has(c)) continue
    return false
  }
  return true
}

let loaded: { notoRegular: Buffer; notoBold: Buffer; scRegular: Buffer; scBold: Buffer; noto: fontkit.Font; sc: fontkit.Font } | null = null

function fonts() {
  if (!loaded) {
    const notoRegular = readFileSync(join(latinDir, 'NotoSans-Regular.ttf'))
    const scRegular = readFileSync(join(scDir, 'NotoSansHans-Regular.otf'))
    loaded = {
      notoRegular,
      notoBold: readFileSync(join(latinDir, 'NotoSans-Bold.ttf')),
      scRegular,
      scBold: readFileSync(join(scDir, 'NotoSansHans-Bold.otf')),
      noto: fontkit.create(notoRegular) as fontkit.Font,
      sc: fontkit.create(scRegular) as fontkit.Font,
    }
  }
  return loaded
}

/** Split text into runs, each in the first font that has its glyphs (Noto Sans, then SC). */
export function fontRuns(s: string, base: FontName): { text: string; font: FontName }[] {
  if (base === 'Helvetica') return [{ text: s, font: 'Helvetica' }]
  const f = fonts()
  const runs: { text: string; font: FontName }[] = []
  for (const ch of s) {
    const cp = ch.codePointAt(0)!
    const font: FontName =
      cp <= 0x20 || f.noto.hasGlyphForCodePoint(cp) ? 'NotoSans' : f.sc.hasGlyphForCodePoint(cp) ? 'NotoSansSC' : 'NotoSans'
    const last = runs[runs.length - 1]
    // Spaces join the run they follow, so words stay together.
    if (last && (last.font === font || cp <= 0x20)) last.text += ch
    else runs.push({ text: ch, font })
  }
  return runs.length ? runs : [{ text: '', font: base }]
}

/** Embedded font files by the names pdfmake's virtual file system knows them under. */
export function embeddedFontFiles(): Record<string, Buffer> {
  const f = fonts()
  return {
    'NotoSans-Regular.ttf': f.notoRegular,
    'NotoSans-Bold.ttf': f.notoBold,
    'NotoSansSC-Regular.otf': f.scRegular,
    'NotoSansSC-Bold.otf': f.scBold,
  }
}

/**
 * Noto Sans by file path, for SVG content (the Swiss QR-bill): pdfmake's SVG renderer hands font
 * names straight to PDFKit, which reads files and does not see pdfmake's virtual file system.
 */
export const NOTO_SVG_FILES = { normal: join(latinDir, 'NotoSans-Regular.ttf'), bold: join(latinDir, 'NotoSans-Bold.ttf') }

/** The font descriptors for pdfmake; embedded fonts are read from its virtual file system. */
export function pdfmakeFonts(base: FontName): Record<string, Record<string, string>> {
  const helvetica = { normal: 'Helvetica', bold: 'Helvetica-Bold', italics: 'Helvetica-Oblique', bolditalics: 'Helvetica-BoldOblique' }
  if (base === 'Helvetica') return { Helvetica: helvetica }
  return {
    Helvetica: helvetica,
    NotoSans: { normal: 'NotoSans-Regular.ttf', bold: 'NotoSans-Bold.ttf', italics: 'NotoSans-Regular.ttf', bolditalics: 'NotoSans-Bold.ttf' },
    NotoSansSC: { normal: 'NotoSansSC-Regular.otf', bold: 'NotoSansSC-Bold.otf', italics: 'NotoSansSC-Regular.otf', bolditalics: 'NotoSansSC-Bold.otf' },
    NotoSansSvg: { normal: NOTO_SVG_FILES.normal, bold: NOTO_SVG_FILES.bold, italics: NOTO_SVG_FILES.normal, bolditalics: NOTO_SVG_FILES.bold },
  }
}

export const STANDARD_FONT_FILES = ['Helvetica', 'Helvetica-Bold', 'Helvetica-Oblique', 'Helvetica-BoldOblique']

/** The only files a document may read: the standard fonts and the two Noto files SVG text uses. */
export const READABLE_FONT_FILES = [...STANDARD_FONT_FILES, NOTO_SVG_FILES.normal, NOTO_SVG_FILES.bold]
