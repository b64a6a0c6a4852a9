// pdfmake rendering, in a render thread: request (+ logo) → PDF bytes. CPU-bound and blocking: it
// runs only inside the render threads of worker processes (pool-render-threads.ts), never on an
// HTTP event loop.
import pdfmake from 'pdfmake'
import { buildInvoiceDocument, type BuildOptions } from './document.ts'
import { INVALID_LOGO } from './logo.ts'
import { embeddedFontFiles, pdfmakeFonts, READABLE_FONT_FILES } from './fonts.ts'
import { shareParsedFonts } from './patches/font-cache.ts'
import { installPatches } from './patches/install-patches.ts'
import type { InvoiceRequest } from '../invoice-schema.ts'

// No network and no file access from inside a document: fonts are Buffers, images data: URLs.
pdfmake.setUrlAccessPolicy(() => false)
pdfmake.setLocalAccessPolicy((path: string) => READABLE_FONT_FILES.includes(path))

// The server build keeps a virtual file system the typings do not declare.
const vfs = (pdfmake as unknown as { virtualfs: { writeFileSync(name: string, data: Buffer): void } }).virtualfs
let vfsLoaded = false

export async function renderInvoicePdf(req: InvoiceRequest, opts: BuildOptions): Promise<Buffer> {
  // Faster paths inside pdfmake and PDFKit that change no byte of a PDF (patches/README.md),
  // checked and installed as a render thread starts (thread-entry.ts; here for the scripts and
  // tests that render without a thread). After the first call this only reads a flag.
  installPatches()
  try {
    return await render(req, opts)
  } catch (err) {
    // A logo with the right magic bytes can still be corrupt. That is the client's input, not a
    // transient failure: say so (400) instead of retrying. The probe runs only on this error path.
    if (opts.logoDataUrl && !(await imageDecodes(opts.logoDataUrl))) throw new Error(INVALID_LOGO)
    throw err
  }
}

async function imageDecodes(dataUrl: string): Promise<boolean> {
  try {
    pdfmake.setFonts(pdfmakeFonts('Helvetica'))
    await pdfmake.createPdf({ content: [{ image: dataUrl, width: 16 }], defaultStyle: { font: 'Helvetica' } }).getBuffer()
    return true
  } catch {
    return false
  }
}

async function render(req: InvoiceRequest, opts: BuildOptions): Promise<Buffer> {
  const { doc, base } = buildInvoiceDocument(req, opts)
  if (base !== 'Helvetica' && !vfsLoaded) {
    const files = embeddedFontFiles()
    for (const [name, buf] of Object.entries(files)) vfs.writeFileSync(name, buf)
    shareParsedFonts(files)
    vfsLoaded = true
  }
  pdfmake.setFonts(pdfmakeFonts(base))
  return (await pdfmake.createPdf(doc).getBuffer()) as Buffer
}
