// The reference of bench:invoice, in a process of its own like the worker it is compared with:
// N threads (argv[2], the worker's render threads) each rendering an invoice with stock pdfmake in
// a tight loop: the document definition made by the service's own builder (buildInvoiceDocument),
// the service's fonts, then pdfmake's createPdf + getBuffer and nothing of ours (not the shared
// font metrics and layouts of src/invoice/pdf/patches/font-cache.ts), no queue, no HTTP, no storage.
// Warms each thread up, prints "ready", then for each stdin line "<ms> [lines] [threads]" renders an
// invoice of that many lines (default 20, lib/invoice-20.ts) for that long on that many threads
// (default all; 1 is the like-for-like reference of one request at a time) and prints
// {"docs": n, "seconds": s} (those threads together).
import { createRequire } from 'node:module'
import { createInterface } from 'node:readline'
import { pathToFileURL } from 'node:url'
import { isMainThread, parentPort, Worker } from 'node:worker_threads'
import pdfmake from 'pdfmake'
import { buildInvoiceDocument } from '../../../src/invoice/pdf/document.ts'
import { pdfmakeFonts, READABLE_FONT_FILES } from '../../../src/invoice/pdf/fonts.ts'
import { invoiceBodySchema, type InvoiceRequest } from '../../../src/invoice/invoice-schema.ts'
import { invoiceOfLines } from './invoice-20.ts'

// As the service sets them (src/invoice/pdf/thread-render-pdf.ts); a Helvetica invoice reads no file through pdfmake.
pdfmake.setUrlAccessPolicy(() => false)
pdfmake.setLocalAccessPolicy((path: string) => READABLE_FONT_FILES.includes(path))

const requests = new Map<number, InvoiceRequest>()
const requestOf = (lines: number) => {
  let r = requests.get(lines)
  if (!r) requests.set(lines, (r = invoiceBodySchema.parse(invoiceOfLines(lines))))
  return r
}

/** One raw render: the service's document definition, stock pdfmake. */
export async function rawRender(request: InvoiceRequest): Promise<Buffer> {
  const { doc, base } = buildInvoiceDocument(request, { today: '2026-11-21' })
  pdfmake.setFonts(pdfmakeFonts(base))
  return (await pdfmake.createPdf(doc).getBuffer()) as Buffer
}

if (isMainThread && process.argv[1]?.endsWith('render-reference.ts')) {
  const threads = Math.max(1, Number(process.argv[2] ?? 1))
  // A new thread does not get the main thread's TypeScript loader: it registers tsx for itself
  // before it imports this file (as the snapshot thread does, src/embedded/snapshot-client.ts).
  const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx/esm/api').replace(/\.cjs$/, '.mjs')).href
  const entry = `import(${JSON.stringify(tsx)}).then(({ register }) => { register(); return import(${JSON.stringify(import.meta.url)}) })`
  const workers = Array.from({ length: threads }, () => new Worker(entry, { eval: true }))
  const ask = (w: Worker, ms: number, lines: number) =>
    new Promise<number>((resolve, reject) => {
      w.once('message', resolve)
      w.once('error', reject)
      w.postMessage({ ms, lines })
    })
  // Warm-up: JIT and fonts, as the worker's render threads are warm before they are measured.
  await Promise.all(workers.map((w) => ask(w, 2_000, 20)))
  process.stdout.write('ready\n')
  for await (const line of createInterface({ input: process.stdin })) {
    const [ms, lines = 20, use = threads] = line.trim().split(/\s+/).map(Number)
    if (!ms) continue
    const start = performance.now()
    const counts = await Promise.all(workers.slice(0, Math.max(1, Math.min(threads, use!))).map((w) => ask(w, ms, lines!)))
    process.stdout.write(JSON.stringify({ docs: counts.reduce((a, b) => a + b, 0), seconds: (performance.now() - start) / 1000 }) + '\n')
  }
  await Promise.all(workers.map((w) => w.terminate()))
} else if (!isMainThread) {
  parentPort!.on('message', async ({ ms, lines }: { ms: number; lines: number }) => {
    const request = requestOf(lines)
    let n = 0
    const start = performance.now()
    // At least one document, however long it takes (a 1,000-line invoice in a short round).
    while (n === 0 || performance.now() - start < ms) {
      await rawRender(request)
      n++
    }
    parentPort!.postMessage(n)
  })
}
