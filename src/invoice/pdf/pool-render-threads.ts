// A pool of render threads per worker process, so a render never blocks the worker's event loop
// (lock renewal, other queues). Runs on the worker's main thread; each thread runs
// thread-entry.ts. A worker process warms the pool as it starts (warmRenderPool).
import v8 from 'node:v8'
import { Piscina } from 'piscina'
import type { RenderTask, WarmEInvoiceTask } from './thread-entry.ts'
import { invoiceBodySchema } from '../invoice-schema.ts'

let pool: Piscina | null = null
let laterWarm: NodeJS.Timeout | undefined

// How long after the plain-PDF warm-up the threads load the e-invoice libraries: late enough that
// the first invoices after a start do not share the CPU with it.
const EINVOICE_WARM_DELAY_MS = 20_000

// A render allocates ~10 MB of short-lived objects (text runs, layout nodes, PDF chunks). V8 starts
// a thread's young generation small and grows it (up to 48 MB) under that rate and keeps it: worker
// RSS then climbed ~20 % over the first thousands of renders. Capping it at 8 MB kept RSS flat but
// cost a fifth of a render in garbage collection (scavenges every ~3 MB, survivors promoted and
// collected again by the old generation: 11.6 of a render thread's 33 ms per invoice in the
// profile; 2.7 ms without the cap). Instead the threads start with the young generation they would
// grow to (16 MB semi-spaces, 48 MB in all), so that memory is as high from the first render as it
// would end up rather than creeping up. Not yet confirmed on a quiet machine: at load 10–14 the
// RSS reading of bench:invoice swung as much with the 8 MB cap as without (docs/benchmarks.md).
const RENDER_THREAD_YOUNG_GEN_MB = 48
const RENDER_THREAD_SEMI_SPACE_MB = RENDER_THREAD_YOUNG_GEN_MB / 3

export function renderPool(threads: number): Piscina {
  if (!pool) {
    // Read by V8 when an isolate is created, so it reaches the threads started from here on (V8 has
    // no per-thread setting for the starting size; the main thread's heap already exists).
    v8.setFlagsFromString(`--min-semi-space-size=${RENDER_THREAD_SEMI_SPACE_MB}`)
    pool = new Piscina({
      filename: new URL('./thread-entry.ts', import.meta.url).href,
      minThreads: 1,
      maxThreads: threads,
      idleTimeout: 60_000,
      resourceLimits: { maxYoungGenerationSizeMb: RENDER_THREAD_YOUNG_GEN_MB },
    })
  }
  return pool
}

export async function renderInPool(task: RenderTask, threads: number): Promise<Buffer> {
  const out: Uint8Array = await renderPool(threads).run(task)
  return Buffer.from(out.buffer, out.byteOffset, out.byteLength)
}

/**
 * Start the pool's first thread and render one small invoice in it: a cold thread loads pdfmake and
 * the fonts first (~1 s of CPU), which on a busy machine took longer than the first request could
 * wait. Only the first: the pool keeps one thread (more are started as renders queue, and end when
 * idle), and warming every thread at once doubled that load while the whole system was starting.
 * The others start with the e-invoice warm-up below.
 */
export async function warmRenderPool(threads: number): Promise<void> {
  const request = invoiceBodySchema.parse({ items: [{ description: 'Warm-up', quantity: 1, unit_price: 1 }] })
  await renderInPool({ request, today: new Date().toISOString().slice(0, 10) }, threads)
  clearTimeout(laterWarm)
  laterWarm = setTimeout(() => {
    const warm: WarmEInvoiceTask = { warm: 'einvoice' }
    // Tasks at once make the pool start its other threads. A thread that misses one (piscina may
    // give two to the same thread) loads the libraries with its first e-invoice.
    for (let i = 0; i < threads; i++) pool?.run(warm).catch(() => undefined)
  }, EINVOICE_WARM_DELAY_MS).unref()
}

export async function closeRenderPool(): Promise<void> {
  clearTimeout(laterWarm)
  const p = pool
  pool = null
  await p?.destroy()
}
