// Real processes: an api process drains an in-flight invoice on SIGTERM and exits 0; two worker
// processes share the render queue; a worker process serves its probes on WORKER_PORT.
import assert from 'node:assert/strict'
import { spawn, type ChildProcess } from 'node:child_process'
import { freePort } from './helpers/ports.ts'
import { findAccountByKey, setPlan } from '../src/platform/accounts.ts'
import { readConsumers } from '../src/platform/queue/consumers.ts'
import { QueueName } from './helpers/queue-names.ts'
import { invoiceSlots } from '../src/invoice/store/invoice-store.ts'
import { startWorkers } from '../workers/main.ts'
import { spawnWorker, startSystem, waitForExit, type TestSystem } from './helpers/system.ts'
import { get, post } from './helpers/http.ts'

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

async function until<T>(what: string, fn: () => Promise<T | undefined | false>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const v = await fn().catch(() => undefined)
    if (v) return v
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await sleep(100)
  }
}

function spawnApi(env: Record<string, string>): ChildProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'api', '--service', 'invoice'], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  child.stderr!.on('data', (b) => process.env.DEBUG_WORKERS && process.stderr.write(b))
  return child
}

const kill = (c: ChildProcess) => c.exitCode === null && c.signalCode === null && c.kill('SIGKILL')

describe('ops: graceful shutdown of an api process', () => {
  let sys: TestSystem
  let api: ChildProcess | undefined
  before(async () => {
    sys = await startSystem({ services: [], workers: false })
  })
  after(async () => {
    if (api) kill(api)
    await sys?.stop()
  })

  it('SIGTERM while an invoice request waits: no new connections, the request still gets its PDF, exit 0', async function () {
    this.timeout(120_000)
    const port = await freePort()
    const base = `http://127.0.0.1:${port}`
    api = spawnApi({ ...sys.env, INVOICE_PORT: String(port), SHUTDOWN_TIMEOUT_MS: '40000' })
    await until('api up', async () => (await get(`${base}/healthz`)).status === 200, 60_000)
    const key = (await post(`${base}/api/v1/signup`, { email: 'drain@example.com' })).json.api_key
    assert.ok(key)

    // A render worker that takes nothing yet (paused): the request is admitted and parked.
    const workers = await startWorkers(sys.platform, { queues: [QueueName.InvoiceRender] })
    await Promise.all(workers.workers.map((w) => w.worker.pause()))
    const inFlight = post(`${base}/api/v1/invoice`, { items: [{ description: 'Drained safely', quantity: 2, unit_price: 5 }] }, { key })
    await until('invoice queued', async () => (await sys.platform.queues.queue(QueueName.InvoiceRender).getWaitingCount()) === 1)
    const exited = waitForExit(api)
    api.kill('SIGTERM')
    await until('listener closed', async () => {
      try {
        await fetch(`${base}/healthz`, { headers: { connection: 'close' } })
        return false
      } catch {
        return true
      }
    })
    assert.equal(api.exitCode, null, 'still draining the in-flight request')

    workers.workers.forEach((w) => w.worker.resume())
    try {
      const res = await inFlight
      assert.equal(res.status, 200, res.text)
      assert.equal(res.headers.get('content-type'), 'application/pdf')
      assert.equal(res.body.subarray(0, 5).toString(), '%PDF-')
      assert.equal(await exited, 0)
    } finally {
      await workers.close(5_000)
    }
  })
})

describe('ops: scaling and worker probes', () => {
  let sys: TestSystem
  const children: ChildProcess[] = []
  before(async () => {
    sys = await startSystem({ services: ['invoice'], workers: false })
  })
  after(async () => {
    children.forEach(kill)
    await sys?.stop()
  })

  it('two worker processes share the render queue: each renders some of 12 invoices', async function () {
    this.timeout(240_000)
    const args = ['--queues', QueueName.InvoiceRender, '--concurrency', '1']
    const w1 = spawnWorker(sys.env, args)
    const w2 = spawnWorker(sys.env, args)
    children.push(w1, w2)
    const queue = sys.platform.queues.queue(QueueName.InvoiceRender)
    await until('both workers connected', async () => (await queue.getWorkersCount()) >= 2, 150_000)
    // And announced (after warming their render threads): until then invoices get 503.
    await until('both workers consuming', async () => (await readConsumers(sys.platform, QueueName.InvoiceRender)).workers >= 2, 150_000)

    const key = (await post(`${sys.url.invoice}/signup`, { email: 'scale@example.com' })).json.api_key
    const account = (await findAccountByKey(sys.platform.db, 'invoice', key))!
    await setPlan(sys.platform.db, account._id, 'pro')
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) => post(`${sys.url.invoice}/invoice`, { items: [{ description: `Row ${i}`, quantity: 1, unit_price: i }] }, { key })),
    )
    assert.deepEqual(results.map((r) => r.status), Array(12).fill(200))

    const ids = (await invoiceSlots(sys.platform.db).findAll({ account_id: account._id })).map((d) => d._id)
    assert.equal(ids.length, 12)
    const byWorker = new Map<string, number>()
    for (const id of ids) {
      const who = (await queue.getJob(id))?.returnvalue?.worker as string
      byWorker.set(who, (byWorker.get(who) ?? 0) + 1)
    }
    const pids = [...byWorker.keys()].map((w) => Number(w.split(':').pop())).sort()
    assert.deepEqual(pids, [w1.pid!, w2.pid!].sort(), `renders by worker: ${JSON.stringify([...byWorker])}`)

    w1.kill('SIGTERM')
    w2.kill('SIGTERM')
    assert.deepEqual(await Promise.all([waitForExit(w1), waitForExit(w2)]), [0, 0])
  })

  it('a worker process with WORKER_PORT serves /healthz, /readyz and /metrics with job metrics', async function () {
    this.timeout(240_000)
    const port = await freePort()
    const w = spawnWorker({ ...sys.env, WORKER_PORT: String(port) })
    children.push(w)
    const base = `http://127.0.0.1:${port}`
    await until('worker probes up', async () => (await get(`${base}/readyz`)).status === 200, 150_000)
    assert.deepEqual((await get(`${base}/healthz`)).json, { status: 'ok' })

    const key = (await post(`${sys.url.invoice}/signup`, { email: 'probe@example.com' })).json.api_key
    assert.equal((await post(`${sys.url.invoice}/invoice`, { items: [{ description: 'Probe', quantity: 1, unit_price: 1 }] }, { key })).status, 200)
    const m = (await get(`${base}/metrics`)).text
    assert.match(m, /queue_job_run_seconds_count\{queue="invoice-render",outcome="completed"\} [1-9]/)
    assert.match(m, /invoice_render_seconds_count [1-9]/)
    // Workers serve no API docs or dashboard.
    assert.equal((await get(`${base}/openapi.json`)).status, 404)

    w.kill('SIGTERM')
    assert.equal(await waitForExit(w), 0)
  })
})
