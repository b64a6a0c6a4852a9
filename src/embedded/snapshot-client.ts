// The main thread's side of the snapshot thread (snapshot-thread.ts): starts it on first use (and
// again after it died), sends it one snapshot to write at a time, and can hurry the one under way.
import { createRequire } from 'node:module'
import { pathToFileURL } from 'node:url'
import { Worker } from 'node:worker_threads'
import type { KnownCollections, Manifest } from './snapshot.ts'

export interface SnapshotThreadData {
  mongoUrl: string
  database: string
  known: KnownCollections
}

/** Write a snapshot into `dir`, or (`hurry`) read the one under way at full speed from now on. */
export type SnapshotRequest = { id: number; dir: string; pace: number; clean: string[] } | { hurry: true }
export type SnapshotReply = { id: number; manifest: Manifest } | { id: number; error: string }

export interface SnapshotThread {
  /**
   * Write a snapshot into `dir` (which must not exist), reading at `pace` (0–1] of wall time;
   * the `clean` collections are taken over from the snapshot beside it (snapshot.ts, Reuse).
   */
  write(dir: string, pace: number, clean?: string[]): Promise<Manifest>
  hurry(): void
  stop(): Promise<void>
}

/** One snapshot at a time: keepStore never asks for two at once. */
export function snapshotThread(data: SnapshotThreadData): SnapshotThread {
  let worker: Worker | null = null
  let next = 0
  const pending = new Map<number, { resolve(m: Manifest): void; reject(err: Error): void }>()
  const failAll = (err: Error) => {
    for (const p of pending.values()) p.reject(err)
    pending.clear()
  }
  const start = (): Worker => {
    // The thread registers tsx (which runs this TypeScript) for itself before it imports its
    // entry: under `tsx src/main.ts` a new thread does not get the main thread's loader.
    // Resolved through require (import.meta.resolve is missing where tsx compiles this as
    // CommonJS), which finds the API's CommonJS build; its ES module build sits beside it.
    const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx/esm/api').replace(/\.cjs$/, '.mjs')).href
    const entry = new URL('./snapshot-thread.ts', import.meta.url).href
    const boot = `import(${JSON.stringify(tsx)}).then(({ register }) => { register(); return import(${JSON.stringify(entry)}) })`
    const w = new Worker(boot, { eval: true, workerData: data })
    w.on('message', (reply: SnapshotReply) => {
      const p = pending.get(reply.id)
      pending.delete(reply.id)
      if ('error' in reply) p?.reject(new Error(reply.error))
      else p?.resolve(reply.manifest)
    })
    w.on('error', (err) => failAll(err))
    w.on('exit', (code) => {
      if (worker === w) worker = null
      failAll(new Error(`the snapshot thread exited (code ${code})`))
    })
    // An idle snapshot thread does not keep the process alive.
    w.unref()
    return w
  }
  return {
    write(dir, pace, clean = []) {
      worker ??= start()
      const id = ++next
      const w = worker
      return new Promise<Manifest>((resolve, reject) => {
        pending.set(id, { resolve, reject })
        w.ref() // a snapshot under way does
        w.postMessage({ id, dir, pace, clean } satisfies SnapshotRequest)
      }).finally(() => w.unref())
    },
    hurry() {
      worker?.postMessage({ hurry: true } satisfies SnapshotRequest)
    },
    async stop() {
      const w = worker
      worker = null
      await w?.terminate()
    },
  }
}
