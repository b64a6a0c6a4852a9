// The reference of bench:invoice, in a process of its own like the worker it is compared with:
// N threads (argv[2], the worker's render threads) each rendering the 20-line invoice with pdfmake
// in a tight loop, the document definition made by the service's own builder (renderInvoicePdf:
// buildInvoiceDocument + pdfmake), no queue, no HTTP, no storage. Warms each thread up, prints
// "ready", then for each stdin line "<ms>" renders for that long on every thread and prints
// {"docs": n, "seconds": s} (all threads together).
import { createRequire } from 'node:module'
import { createInterface } from 'node:readline'
import { pathToFileURL } from 'node:url'
import { isMainThread, parentPort, Worker } from 'node:worker_threads'
import { renderInvoicePdf } from '../../../src/invoice/pdf/render.ts'
import { invoiceBodySchema } from '../../../src/invoice/invoice-schema.ts'
import { invoice20 } from './invoice-20.ts'

const request = invoiceBodySchema.parse(invoice20)
const render = () => renderInvoicePdf(request, { today: '2026-11-21' })

if (isMainThread) {
  const threads = Math.max(1, Number(process.argv[2] ?? 1))
  // A new thread does not get the main thread's TypeScript loader: it registers tsx for itself
  // before it imports this file (as the snapshot thread does, src/platform/embedded/snapshot-client.ts).
  const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx/esm/api').replace(/\.cjs$/, '.mjs')).href
  const entry = `import(${JSON.stringify(tsx)}).then(({ register }) => { register(); return import(${JSON.stringify(import.meta.url)}) })`
  const workers = Array.from({ length: threads }, () => new Worker(entry, { eval: true }))
  const ask = (w: Worker, ms: number) =>
    new Promise<number>((resolve, reject) => {
      w.once('message', resolve)
      w.once('error', reject)
      w.postMessage(ms)
    })
  // Warm-up: JIT and fonts, as the worker's render threads are warm before they are measured.
  await Promise.all(workers.map((w) => ask(w, 2_000)))
  process.stdout.write('ready\n')
  for await (const line of createInterface({ input: process.stdin })) {
    const ms = Number(line)
    if (!ms) continue
    const start = performance.now()
    const counts = await Promise.all(workers.map((w) => ask(w, ms)))
    process.stdout.write(JSON.stringify({ docs: counts.reduce((a, b) => a + b, 0), seconds: (performance.now() - start) / 1000 }) + '\n')
  }
  await Promise.all(workers.map((w) => w.terminate()))
} else {
  parentPort!.on('message', async (ms: number) => {
    let n = 0
    const start = performance.now()
    while (performance.now() - start < ms) {
      await render()
      n++
    }
    parentPort!.postMessage(n)
  })
}
