// PDF checks through poppler and qpdf: the text a reader would see, and structural validity.
import { execFileSync } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

function tmpFile(buf: Buffer): string {
  const f = join(mkdtempSync(join(tmpdir(), 'qw-pdf-')), 'doc.pdf')
  writeFileSync(f, buf)
  return f
}

export function pdfText(buf: Buffer, layout = true): string {
  return execFileSync('pdftotext', [...(layout ? ['-layout'] : []), tmpFile(buf), '-'], { encoding: 'utf8' })
}

export function pdfPages(buf: Buffer): number {
  const info = execFileSync('pdfinfo', [tmpFile(buf)], { encoding: 'utf8' })
  return Number(/Pages:\s+(\d+)/.exec(info)?.[1])
}

/** qpdf --check: throws when the file is not a structurally valid PDF. */
export function qpdfCheck(buf: Buffer): void {
  execFileSync('qpdf', ['--check', tmpFile(buf)], { stdio: 'pipe' })
}

/** Every word on one page with its box in points from the top-left corner (pdftotext -bbox). */
export function pdfWords(buf: Buffer, page: number): { word: string; x: number; y: number; right: number; bottom: number }[] {
  const xml = execFileSync('pdftotext', ['-bbox', '-f', String(page), '-l', String(page), tmpFile(buf), '-'], { encoding: 'utf8' })
  return [...xml.matchAll(/<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">([^<]*)<\/word>/g)].map((m) => ({
    word: m[5]!, x: Number(m[1]), y: Number(m[2]), right: Number(m[3]), bottom: Number(m[4]),
  }))
}
