// A pool of render threads per worker process, so a render never blocks the worker's event loop
// (lock renewal, other queues). Threads are started on first use.
import { Piscina } from 'piscina'
import type { RenderTask } from './render-thread.ts'

let pool: Piscina | null = null

export function renderPool(threads: number): Piscina {
  if (!pool) {
    pool = new Piscina({
      filename: new URL('./render-thread.ts', import.meta.url).href,
      minThreads: 1,
      maxThreads: threads,
      idleTimeout: 60_000,
    })
  }
  return pool
}

export async function renderInPool(task: RenderTask, threads: number): Promise<Buffer> {
  const out: Uint8Array = await renderPool(threads).run(task)
  return Buffer.from(out.buffer, out.byteOffset, out.byteLength)
}

export async function closeRenderPool(): Promise<void> {
  const p = pool
  pool = null
  await p?.destroy()
}
