// pdfmake rendering: request (+ logo) → PDF bytes. CPU-bound and blocking: it runs only inside
// the render thread pool of worker processes (render-pool.ts), never on an HTTP event loop.
import pdfmake from 'pdfmake'
import { buildInvoiceDocument, type BuildOptions } from './document.ts'
import { embeddedFontFiles, pdfmakeFonts, STANDARD_FONT_FILES } from './fonts.ts'
import type { InvoiceRequest } from './schema.ts'

// No network and no file access from inside a document: fonts are Buffers, images data: URLs.
pdfmake.setUrlAccessPolicy(() => false)
pdfmake.setLocalAccessPolicy((path: string) => STANDARD_FONT_FILES.includes(path))

// The server build keeps a virtual file system the typings do not declare.
const vfs = (pdfmake as unknown as { virtualfs: { writeFileSync(name: string, data: Buffer): void } }).virtualfs
let vfsLoaded = false

export async function renderInvoicePdf(req: InvoiceRequest, opts: BuildOptions): Promise<Buffer> {
  const { doc, base } = buildInvoiceDocument(req, opts)
  if (base !== 'Helvetica' && !vfsLoaded) {
    for (const [name, buf] of Object.entries(embeddedFontFiles())) vfs.writeFileSync(name, buf)
    vfsLoaded = true
  }
  pdfmake.setFonts(pdfmakeFonts(base))
  return (await pdfmake.createPdf(doc).getBuffer()) as Buffer
}
