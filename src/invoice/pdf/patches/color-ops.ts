// PDFKit's colour operators built once per colour. PDFKit turns a colour into its content-stream
// operators every time text or a line is drawn in it: it parses the hex string, divides each part
// by 255, and prints the three numbers (`0.2 0.2 0.2 scn`): ~0.7 ms of a 20-line invoice, whose
// handful of colours are set hundreds of times. The operators depend only on the colour when it is
// a hex or named colour (then PDFKit's normalisation returns an array); anything else (spot
// colours, gradients, patterns, arrays) takes PDFKit's own path. The PDF is byte for byte the same
// (test/invoice-pdf-fast-paths.test.ts compares renders with stock pdfmake's).
import { createRequire } from 'node:module'
import type { PatchTarget } from './patched-versions.ts'

interface ColorDocument {
  _normalizeColor(color: unknown): unknown
  _getColorSpace(color: unknown): string
  _setColorSpace(space: string, stroke: boolean): unknown
  _setColorCore(color: unknown, stroke: boolean): boolean
  addContent(data: string): unknown
}
interface ColorOps {
  space: string
  content: string
}

const require = createRequire(import.meta.url)
const proto = (require('pdfkit') as { prototype: ColorDocument }).prototype
const setColorCore = proto._setColorCore

/** What this patch replaces or calls: checked before anything is patched (patched-versions.ts). */
export const colorOpsTargets: PatchTarget[] = [
  { dependency: 'pdfkit', owner: 'PDFDocument.prototype', object: proto, methods: ['_setColorCore', '_normalizeColor', '_getColorSpace', '_setColorSpace', 'addContent'], patch: 'color-ops.ts' },
]

/** Colour string → its operators, for filling and for stroking. Colours come from our document builder; bounded anyway. */
const MAX_COLORS = 256
const fill = new Map<string, ColorOps>()
const stroke = new Map<string, ColorOps>()

const setColorCoreCached = function (this: ColorDocument, color: unknown, stroking: boolean): boolean {
  if (typeof color !== 'string') return setColorCore.call(this, color, stroking)
  const known = stroking ? stroke : fill
  let ops = known.get(color)
  if (ops === undefined) {
    const parts = this._normalizeColor(color)
    if (!Array.isArray(parts)) return setColorCore.call(this, color, stroking)
    if (known.size >= MAX_COLORS) known.clear()
    ops = { space: this._getColorSpace(parts), content: `${parts.join(' ')} ${stroking ? 'SCN' : 'scn'}` }
    known.set(color, ops)
  }
  this._setColorSpace(ops.space, stroking)
  this.addContent(ops.content)
  return true
}

/** Replace PDFKit's PDFDocument.prototype._setColorCore (once, by installPatches). */
export function installColorOps(): void {
  proto._setColorCore = setColorCoreCached
}
