// A pool of render threads per worker process, so a render never blocks the worker's event loop
// (lock renewal, other queues). A worker process warms the pool as it starts (warmRenderPool).
import { Piscina } from 'piscina'
import type { RenderTask, WarmEInvoiceTask } from './render-thread.ts'
import { invoiceBodySchema } from '../invoice-schema.ts'

let pool: Piscina | null = null
let laterWarm: NodeJS.Timeout | undefined

// How long after the plain-PDF warm-up the threads load the e-invoice libraries: late enough that
// the first invoices after a start do not share the CPU with it.
const EINVOICE_WARM_DELAY_MS = 20_000

const RENDER_THREAD_YOUNG_GEN_MB = 8

export function renderPool(threads: number): Piscina {
  if (!pool) {
    pool = new Piscina({
      filename: new URL('./render-thread.ts', import.meta.url).href,
      minThreads: 1,
      maxThreads: threads,
      idleTimeout: 60_000,
      // V8 grows a thread's young generation (up to 48 MB) under a render's allocation rate and
      // keeps it: worker RSS then climbed ~20 % over the first thousands of renders. A fixed 8 MB
      // keeps a worker's memory flat from its first renders on (measured: RSS within ±6 % from
      // 500 to 3,000 renders) for about a tenth of a thread's render rate.
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
 * Start the threads and render one small invoice in each: a cold thread loads pdfmake and the
 * fonts first, which on a busy machine took longer than the first request could wait.
 */
export async function warmRenderPool(threads: number): Promise<void> {
  const request = invoiceBodySchema.parse({ items: [{ description: 'Warm-up', quantity: 1, unit_price: 1 }] })
  await Promise.all(Array.from({ length: threads }, () => renderInPool({ request, today: new Date().toISOString().slice(0, 10) }, threads)))
  clearTimeout(laterWarm)
  laterWarm = setTimeout(() => {
    const warm: WarmEInvoiceTask = { warm: 'einvoice' }
    // A thread that misses it (piscina may give both tasks to one) loads them with its first e-invoice.
    for (let i = 0; i < threads; i++) pool?.run(warm).catch(() => undefined)
  }, EINVOICE_WARM_DELAY_MS).unref()
}

export async function closeRenderPool(): Promise<void> {
  clearTimeout(laterWarm)
  const p = pool
  pool = null
  await p?.destroy()
}
