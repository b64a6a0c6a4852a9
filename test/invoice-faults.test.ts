// Faults: a worker process SIGKILLed mid-render, a render that outlives the request's wait, and
// Redis unreachable for the producer. The client gets its PDF or a clear 5xx JSON error, and an
// invoice the client did not receive is never charged.
import assert from 'node:assert/strict'
import type { ChildProcess } from 'node:child_process'
import { setTimeout as sleep } from 'node:timers/promises'
import { startSystem, spawnWorker, waitForExit, type TestSystem } from './helpers/system.ts'
import { getInvoice, invoiceSlots } from '../src/invoice/store/invoice-store.ts'
import { get, post, type Res } from './helpers/http.ts'
import { pdfPages, qpdfCheck } from './helpers/pdf.ts'
import { startRedisServer, type EmbeddedRedis } from '../src/embedded/redis-server.ts'
import { freePort } from './helpers/ports.ts'
import { readConsumers } from '../src/platform/queue/consumers.ts'
import { findAccountByKey, setPlan } from '../src/platform/accounts.ts'
import { startCpuHog } from './helpers/cpu-hog.ts'

const RENDER_TIMEOUT = 'Invoice rendering timed out. Please retry; this request was not counted.'

/** About 2–3 s of rendering: long enough to kill the worker in the middle of it. */
const slowInvoice = {
  invoice_number: 'SLOW-1',
  items: Array.from({ length: 1000 }, (_, i) => ({ description: `${i} ${'Lorem ipsum dolor sit amet consectetur '.repeat(8)}`, quantity: 1, unit_price: 1 })),
}

async function until<T>(what: string, fn: () => Promise<T | null | undefined | false>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const v = await fn()
    if (v) return v
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await sleep(50)
  }
}

/** Spawn a worker process and wait until it is connected to the render queue. */
async function readyWorker(sys: TestSystem): Promise<ChildProcess> {
  const q = sys.platform.queues.queue('invoice-render')
  const before = await q.getWorkersCount()
  const child = spawnWorker(sys.env, ['--queues', 'invoice-render'])
  await until('the worker process to connect', async () => (await q.getWorkersCount()) > before, 60_000)
  // And to announce itself (after warming its render threads): until then invoices get 503. A
  // killed predecessor may still count for its heartbeat's TTL; then the job waits for this one.
  await until('a worker process to consume invoice-render', async () => (await readConsumers(sys.platform, 'invoice-render')).workers > 0, 60_000)
  return child
}

async function kill(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return
  child.kill('SIGKILL')
  await waitForExit(child)
}

describe('invoice faults', function () {
  this.timeout(120_000)

  /** The id of the invoice whose render job a worker holds (then it is rendering). */
  const activeRender = (s: TestSystem) =>
    until('the render to start', async () => (await s.platform.queues.queue('invoice-render').getActive())[0]?.id ?? null)

  describe('a worker process killed while rendering', () => {
    let sys: TestSystem
    const children: ChildProcess[] = []
    before(async () => {
      sys = await startSystem({ services: ['invoice'], workers: false, env: { RENDER_TIMEOUT_MS: '60000' } })
    })
    after(async () => {
      for (const c of children) await kill(c)
      await sys?.stop()
    })

    const invoices = () => invoiceSlots(sys.platform.db)
    const signup = async (email: string) => (await post(`${sys.url.invoice}/signup`, { email })).json.api_key as string
    const usage = async (key: string) => (await get(`${sys.url.invoice}/usage`, { key })).json.invoices_this_month as number

    it('a second worker renders the job; the client gets its PDF and is charged once', async () => {
      const key = await signup('killed@example.com')
      const first = await readyWorker(sys)
      children.push(first)
      const pending: Promise<Res> = post(`${sys.url.invoice}/invoice`, slowInvoice, { key })

      // Killed once the worker holds the job: mid-render (a slow invoice takes seconds), not before.
      const id = await activeRender(sys)
      first.kill('SIGKILL')
      await waitForExit(first)
      assert.equal(await getInvoice(sys.platform.db, id), null, 'killed before it could record it')

      const second = await readyWorker(sys)
      children.push(second)
      const res = await pending
      assert.equal(res.status, 200, res.text)
      assert.equal(res.headers.get('content-type'), 'application/pdf')
      qpdfCheck(res.body)
      assert.ok(pdfPages(res.body) > 10)
      assert.equal(await usage(key), 1)
      assert.equal(res.headers.get('x-invoice-id'), id)
      const stored = await getInvoice(sys.platform.db, id)
      assert.equal(stored!.status, 'done')
      assert.equal(stored!.charged, true)
      assert.equal(await invoices().countDocuments({ account_id: stored!.account_id }), 1, 'recorded once')
      await kill(second)
    })

    it('with no worker left, the client gets a clear 504 and the invoice is not charged, even if a worker comes back', async () => {
      const quick = await startSystem({ services: ['invoice'], workers: false, env: { RENDER_TIMEOUT_MS: '6000' } })
      try {
        const key = (await post(`${quick.url.invoice}/signup`, { email: 'abandoned@example.com' })).json.api_key
        const worker = await readyWorker(quick)
        children.push(worker)
        const pending = post(`${quick.url.invoice}/invoice`, slowInvoice, { key })
        const id = await activeRender(quick)
        const q = quick.platform.queues.queue('invoice-render')
        await kill(worker)

        const res = await pending
        assert.equal(res.status, 504, res.text)
        assert.deepEqual(res.json, { error: RENDER_TIMEOUT })
        assert.equal((await get(`${quick.url.invoice}/usage`, { key })).json.invoices_this_month, 0)

        // A worker that picks the stalled job up later must not store or charge it.
        const late = await readyWorker(quick)
        children.push(late)
        // The abandoned job is either withdrawn by the 504 or, if its dead worker's lock still
        // held it then, found stalled and offered to the late worker: wait until it is one or the other.
        await until('the abandoned job to be withdrawn or settled', async () => ['unknown', 'completed', 'failed'].includes(await q.getJobState(id)), 60_000)
        const after = await getInvoice(quick.platform.db, id)
        assert.equal(after!.status, 'failed')
        assert.equal(after!.charged, false)
        assert.equal(after!.pdf, undefined)
        assert.equal((await get(`${quick.url.invoice}/usage`, { key })).json.invoices_this_month, 0)
        await kill(late)
      } finally {
        await quick.stop()
      }
    })
  })

  describe('render timeout', () => {
    let sys: TestSystem
    before(async () => {
      // A worker that consumes the queue but takes nothing (paused): requests are admitted and wait.
      sys = await startSystem({ services: ['invoice'], workers: { queues: ['invoice-render'] }, env: { RENDER_TIMEOUT_MS: '800', RENDER_ADMIT_WAIT_MS: '0' } })
      await Promise.all(sys.workers!.workers.map((w) => w.worker.pause()))
    })
    after(async () => sys?.stop())

    it('with the render worker not taking jobs: 504 JSON, the reservation is released, a demo too', async () => {
      const key = (await post(`${sys.url.invoice}/signup`, { email: 'timeout@example.com' })).json.api_key
      const all = await Promise.all(Array.from({ length: 3 }, () => post(`${sys.url.invoice}/invoice`, { items: [{ description: 'x', quantity: 1, unit_price: 1 }] }, { key })))
      for (const r of all) {
        assert.equal(r.status, 504, r.text)
        assert.deepEqual(r.json, { error: RENDER_TIMEOUT })
      }
      assert.deepEqual((await get(`${sys.url.invoice}/usage`, { key })).json, { plan: 'free', invoices_this_month: 0, monthly_limit: 5, remaining: 5 })
      const failed = await invoiceSlots(sys.platform.db).findAll({ status: 'failed' })
      assert.equal(failed.length, 3)
      assert.ok(failed.every((d) => d.charged === false && d.error?.status === 504))
      const demo = await post(`${sys.url.invoice}/demo-invoice`, { items: [{ description: 'x', quantity: 1, unit_price: 1 }] })
      assert.equal(demo.status, 504)
    })
  })

  describe('overload: the CPU saturated by another process and more requests than the renders can serve in time', () => {
    let sys: TestSystem
    before(async () => {
      // One render thread, a 1 s admission bound, and a timeout far above it: a refusal is the
      // admission's, never a wait run out. 32 clients with 200-line invoices keep several seconds
      // of work queued however fast rendering gets (at 16 clients × 120 lines a faster render
      // once left the queue under the bound: nothing refused).
      sys = await startSystem({
        services: ['invoice'],
        workers: { queues: ['invoice-render'] },
        env: { RENDER_CONCURRENCY: '1', RENDER_ADMIT_WAIT_MS: '1000', RENDER_TIMEOUT_MS: '90000' },
      })
    })
    after(async () => sys?.stop())

    /** ~0.1–0.2 s of rendering quiet, several times that with the CPU taken. */
    const heavy = (i: number) => ({ invoice_number: `OVER-${i}`, items: Array.from({ length: 200 }, (_, j) => ({ description: `Line ${j} ${'lorem ipsum '.repeat(4)}`, quantity: 1, unit_price: j + 1 })) })

    it('refuses quickly with 503 + Retry-After what cannot start within the bound; every 200 is stored and counted, every 503 changed nothing', async function () {
      this.timeout(240_000)
      const key = (await post(`${sys.url.invoice}/signup`, { email: 'overload@example.com' })).json.api_key
      const acct = (await findAccountByKey(sys.platform.db, 'invoice', key))!
      await setPlan(sys.platform.db, acct._id, 'business')
      const hog = startCpuHog()
      try {
        // The workers report a measured render time before the load starts.
        assert.equal((await post(`${sys.url.invoice}/invoice`, heavy(0), { key })).status, 200)
        await until('a measured render time', async () => (await readConsumers(sys.platform, 'invoice-render')).avgJobMs > 0, 30_000)

        // 32 clients, 2 requests each, back to back: far more waiting than 1 s of renders.
        const results: { status: number; ms: number; retryAfter: string | null; error?: string }[] = []
        await Promise.all(
          Array.from({ length: 32 }, async (_, c) => {
            for (let i = 0; i < 2; i++) {
              const t = performance.now()
              const r = await post(`${sys.url.invoice}/invoice`, heavy(1 + c * 2 + i), { key })
              results.push({ status: r.status, ms: performance.now() - t, retryAfter: r.headers.get('retry-after'), error: r.json?.error })
            }
          }),
        )
        const ok = results.filter((r) => r.status === 200)
        const refused = results.filter((r) => r.status === 503)
        assert.deepEqual(results.filter((r) => r.status !== 200 && r.status !== 503), [], 'only served or refused')
        assert.ok(refused.length > 0, 'some requests are refused')
        for (const r of refused) {
          assert.match(r.error!, /^Too busy: the invoice-render queue holds about \d+ s of work, more than this request may wait \(1 s\)\. Please retry in \d+ s; this request was not counted\.$/)
          assert.ok(Number(r.retryAfter) >= 1, `Retry-After ${r.retryAfter}`)
        }
        // Nothing acknowledged is lost, nothing refused is kept or counted.
        const usage = (await get(`${sys.url.invoice}/usage`, { key })).json.invoices_this_month
        assert.equal(usage, ok.length + 1)
        const stored = await invoiceSlots(sys.platform.db).findAll({ account_id: acct._id })
        assert.equal(stored.length, ok.length + 1)
        assert.ok(stored.every((d) => d.status === 'done' && d.charged === true))
        const ms = refused.map((r) => r.ms).sort((a, b) => a - b)
        const served = ok.map((r) => r.ms).sort((a, b) => a - b)
        console.log(
          `      overload: ${results.length} requests, ${ok.length} served (p50 ${Math.round(served[served.length >> 1] ?? 0)} ms, max ${Math.round(served.at(-1) ?? 0)} ms), ` +
            `${refused.length} refused (p50 ${Math.round(ms[ms.length >> 1]!)} ms, max ${Math.round(ms.at(-1)!)} ms)`,
        )
      } finally {
        await hog.stop()
      }
    })
  })

  describe('Redis unreachable for the producer', () => {
    let redis: EmbeddedRedis
    let sys: TestSystem
    before(async () => {
      redis = await startRedisServer({ port: await freePort(), appendonly: false })
      sys = await startSystem({ services: ['invoice'], env: { REDIS_URL: redis.url } })
    })
    after(async () => {
      await sys?.stop()
      await redis?.child.stop()
    })

    it('answers 503 and charges nothing while Redis is down, and works again once it is back', async () => {
      const key = (await post(`${sys.url.invoice}/signup`, { email: 'redis-down@example.com' })).json.api_key
      assert.equal((await post(`${sys.url.invoice}/invoice`, { items: [{ description: 'ok', quantity: 1, unit_price: 1 }] }, { key })).status, 200)

      await redis.child.stop()
      const started = Date.now()
      const res = await post(`${sys.url.invoice}/invoice`, { items: [{ description: 'down', quantity: 1, unit_price: 1 }] }, { key })
      assert.equal(res.status, 503, res.text)
      assert.deepEqual(res.json, { error: 'Service temporarily unavailable, please retry' })
      assert.ok(res.headers.get('retry-after'))
      assert.ok(Date.now() - started < 15_000, 'fails fast instead of hanging')
      assert.deepEqual((await get(`${sys.url.invoice}/usage`, { key })).json, { plan: 'free', invoices_this_month: 1, monthly_limit: 5, remaining: 4 })
      // Recorded failed, not charged: a render of it, had the add reached Redis after all, is not kept.
      const acct = (await findAccountByKey(sys.platform.db, 'invoice', key))!
      const given = await invoiceSlots(sys.platform.db).findAll({ account_id: acct._id, status: 'failed' })
      assert.deepEqual(given.map((d) => [d.charged, d.error?.status]), [[false, 503]])
      const demo = await post(`${sys.url.invoice}/demo-invoice`, { items: [{ description: 'down', quantity: 1, unit_price: 1 }] })
      assert.equal(demo.status, 503, demo.text)

      redis = await startRedisServer({ port: redis.port, appendonly: false })
      const back = await until('Redis to be usable again', async () => {
        const r = await post(`${sys.url.invoice}/invoice`, { items: [{ description: 'back', quantity: 1, unit_price: 1 }] }, { key })
        return r.status === 200 ? r : null
      })
      qpdfCheck(back.body)
      assert.equal((await get(`${sys.url.invoice}/usage`, { key })).json.invoices_this_month, 2)
    })
  })
})
