// The autoscaling signal across processes: two worker processes serve /metrics, exactly one of them
// (the export lease holder) exports queue_waiting_jobs and queue_oldest_waiting_age_seconds, the
// age of a job no worker takes keeps growing, and when the exporter is killed the other takes over.
import assert from 'node:assert/strict'
import type { ChildProcess } from 'node:child_process'
import { freePort } from './helpers/ports.ts'
import { invoiceRenderContract } from '../src/invoice/job-contracts.ts'
import { loadConfig } from '../src/platform/config.ts'
import { enqueue } from '../src/platform/queue/job.ts'
import { QueueName } from './helpers/queue-names.ts'
import { spawnWorker, startSystem, waitForExit, type TestSystem } from './helpers/system.ts'

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

async function until<T>(what: string, fn: () => Promise<T | undefined | false>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const v = await fn().catch(() => undefined)
    if (v) return v
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await sleep(100)
  }
}

const LEASE_MS = 2_000

/** The signal's samples in one process's /metrics: metric name → queue → value. */
async function signal(root: string): Promise<Record<string, Record<string, number>>> {
  const text = await (await fetch(`${root}/metrics`)).text()
  const out: Record<string, Record<string, number>> = {}
  for (const m of text.matchAll(/^(queue_waiting_jobs|queue_oldest_waiting_age_seconds)\{queue="([^"]+)"\} (\S+)$/gm)) {
    ;(out[m[1]!] ??= {})[m[2]!] = Number(m[3])
  }
  return out
}

describe('ops: the queue autoscaling signal is exported by exactly one process', () => {
  let sys: TestSystem
  const workers: ChildProcess[] = []
  const roots: string[] = []

  before(async function () {
    this.timeout(120_000)
    // This process serves no /metrics for the file's prefix: the two worker processes are the only candidates.
    sys = await startSystem({ services: [], workers: false })
    for (let i = 0; i < 2; i++) {
      const port = await freePort()
      // They serve another queue, so invoice-render has no worker and its jobs wait.
      workers.push(spawnWorker({ ...sys.env, WORKER_PORT: String(port), QUEUE_SIGNAL_LEASE_MS: String(LEASE_MS) }, ['--queues', QueueName.InvoiceBatchCallback]))
      roots.push(`http://127.0.0.1:${port}`)
    }
    for (const r of roots) await until(`worker ${r}`, async () => (await fetch(`${r}/healthz`)).ok)
  })

  after(async () => {
    const running = workers.filter((w) => w.exitCode === null && w.signalCode === null)
    for (const w of running) w.kill('SIGKILL')
    await Promise.all(running.map(waitForExit))
    await sys?.stop()
  })

  it('a lease shorter than a second stops the process naming QUEUE_SIGNAL_LEASE_MS', () => {
    assert.throws(() => loadConfig({ QUEUE_SIGNAL_LEASE_MS: '200' }), /Invalid configuration: QUEUE_SIGNAL_LEASE_MS/)
    assert.equal(loadConfig({}).QUEUE_SIGNAL_LEASE_MS, 15_000)
  })

  it('one exporter, a growing age for a queue nobody serves, and a takeover when the exporter dies', async function () {
    this.timeout(120_000)
    await enqueue(sys.platform, invoiceRenderContract, { invoice_id: 'signal-1' })
    const enqueuedAt = Date.now()

    // Exactly one target has the series; a sum over both targets counts the job once.
    const holder = await until('one exporter', async () => {
      const s = await Promise.all(roots.map(signal))
      const exporting = s.flatMap((x, i) => (x.queue_waiting_jobs ? [i] : []))
      return exporting.length === 1 && s[exporting[0]!]!.queue_waiting_jobs![QueueName.InvoiceRender] === 1 ? exporting[0]! + 1 : false
    })
    const h = holder - 1
    const other = 1 - h
    // Several scrapes later it is still the same single exporter (a live holder keeps its lease).
    for (let i = 0; i < 3; i++) {
      await sleep(LEASE_MS / 2)
      const [a, b] = await Promise.all(roots.map(signal))
      const both = [a!, b!]
      assert.equal(both[other]!.queue_waiting_jobs, undefined, 'the other process exports nothing')
      assert.equal(both[other]!.queue_oldest_waiting_age_seconds, undefined)
      assert.equal(both[h]!.queue_waiting_jobs![QueueName.InvoiceRender], 1)
      assert.equal(both[h]!.queue_waiting_jobs![QueueName.CaptureForward], 0, 'every queue is listed, idle ones at 0')
      assert.equal(both[h]!.queue_oldest_waiting_age_seconds![QueueName.CaptureForward], 0)
    }

    // The age is the waiting time of the oldest job: it grows while nobody takes the job.
    const first = (await signal(roots[h]!)).queue_oldest_waiting_age_seconds![QueueName.InvoiceRender]!
    assert.ok(first > 0 && first <= (Date.now() - enqueuedAt) / 1000 + 1, `age ${first}`)
    await until('age grows', async () => (await signal(roots[h]!)).queue_oldest_waiting_age_seconds![QueueName.InvoiceRender]! >= first + 1)

    // The exporter dies: the other process takes the lease over once it expires.
    workers[h]!.kill('SIGKILL')
    await waitForExit(workers[h]!)
    const taken = await until('takeover', async () => (await signal(roots[other]!)).queue_waiting_jobs?.[QueueName.InvoiceRender] === 1, LEASE_MS * 5)
    assert.ok(taken)
  })
})
