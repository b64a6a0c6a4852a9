// Operations endpoints on every service: /healthz, /readyz, /metrics, the /admin/queues dashboard
// (token, retry and clean actions), /openapi.json (covers every route) and the /docs page.
import assert from 'node:assert/strict'
import type Router from '@koa/router'
import { Worker } from 'bullmq'
import { JOBS } from '../jobs/index.ts'
import { SERVICES } from '../src/services.ts'
import { createRedis } from '../src/platform/redis/redis.ts'
import { QueueName } from './helpers/queue-names.ts'
import { spawnWorker, startSystem, waitForExit, type TestSystem } from './helpers/system.ts'
import { startWorkers } from '../workers/main.ts'
import { invoiceSlots } from '../src/invoice/store/invoice-store.ts'
import { replays } from '../src/webhooks/store/replay-store.ts'
import { HEARTBEAT_TTL_MS } from '../src/platform/queue/consumers.ts'
import { startCpuHog } from './helpers/cpu-hog.ts'
import { capture, createEndpoint, signup } from './helpers/webhooks.ts'
import { call, get, post } from './helpers/http.ts'
import { launchChromium } from './helpers/browser.ts'

const TOKEN = 'ops-test-admin-token-0123456789'
const basic = (user: string, pass: string) => `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`
const bearer = { authorization: `Bearer ${TOKEN}` }

/** The value of one sample in Prometheus text, or undefined. Labels must all be present. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(name + '{') && !line.startsWith(name + ' ')) continue
    const rest = line.slice(name.length)
    if (Object.entries(labels).every(([k, v]) => rest.includes(`${k}="${v}"`))) return Number(line.split(' ').pop())
  }
  return undefined
}

describe('ops: health, readiness and metrics without an admin token', () => {
  let sys: TestSystem
  before(async () => {
    sys = await startSystem({ workers: false })
  })
  after(async () => sys?.stop())

  it('every service answers /healthz', async () => {
    for (const svc of SERVICES) {
      const r = await get(`${sys.root[svc.name]}/healthz`)
      assert.equal(r.status, 200, svc.name)
      assert.deepEqual(r.json, { status: 'ok' })
    }
  })

  it('/readyz is 503 until a worker has registered the job schedulers, naming what is missing', async () => {
    const r = await get(`${sys.root.invoice}/readyz`)
    assert.equal(r.status, 503)
    assert.equal(r.json.status, 'not ready')
    assert.equal(r.json.checks.mongo, 'ok')
    assert.equal(r.json.checks.redis, 'ok')
    for (const def of JOBS.filter((j) => j.scheduler)) assert.match(r.json.checks.schedulers, new RegExp(def.scheduler!.id))
    assert.equal(r.json.checks.workers, 'failed: no worker is consuming invoice-render (requests that wait on it get 503)')
    // The flags service waits on no queue: only the schedulers keep it not ready.
    assert.equal((await get(`${sys.root.flags}/readyz`)).json.checks.workers, 'ok')
  })

  it('the dashboard is off (404 JSON) when no ADMIN_TOKEN is configured', async () => {
    for (const path of ['/admin/queues', '/admin/queues/api/queues']) {
      const r = await get(`${sys.root.invoice}${path}`, { headers: bearer })
      assert.equal(r.status, 404)
      assert.deepEqual(r.json, { error: 'Not found' })
    }
  })

  it('/metrics is open and labels requests by route template, never by raw path', async () => {
    await get(`${sys.root.invoice}/healthz`)
    await get(`${sys.root.invoice}/no/such/path/123`)
    const r = await get(`${sys.root.invoice}/metrics`)
    assert.equal(r.status, 200)
    assert.match(r.headers.get('content-type')!, /^text\/plain/)
    assert.ok(sample(r.text, 'http_request_duration_seconds_count', { service: 'invoice', route: '/healthz', status: '200' })! >= 1)
    assert.ok(sample(r.text, 'http_request_duration_seconds_count', { service: 'invoice', route: 'unmatched', status: '404' })! >= 1)
    assert.ok(!r.text.includes('/no/such/path'))
    assert.match(r.text, /process_resident_memory_bytes/)
    // QUEUE_METRICS is off in this process: no queue depth here.
    assert.equal(sample(r.text, 'queue_jobs', { queue: 'invoice-render' }), undefined)
  })

  it('the request duration histogram counts each request once, in cumulative buckets ending at +Inf = _count', async () => {
    const labels = { service: 'invoice', method: 'GET', route: '/healthz', status: '200' }
    const scrape = async () => (await get(`${sys.root.invoice}/metrics`)).text
    const before = sample(await scrape(), 'http_request_duration_seconds_count', labels) ?? 0
    await Promise.all(Array.from({ length: 7 }, () => get(`${sys.root.invoice}/healthz`)))
    const text = await scrape()
    assert.equal(sample(text, 'http_request_duration_seconds_count', labels), before + 7)
    const buckets = text
      .split('\n')
      .filter((l) => l.startsWith('http_request_duration_seconds_bucket{') && Object.entries(labels).every(([k, v]) => l.includes(`${k}="${v}"`)))
      .map((l) => ({ le: /le="([^"]+)"/.exec(l)![1]!, n: Number(l.split(' ').pop()) }))
    assert.deepEqual(
      buckets.map((b) => b.le),
      ['0.001', '0.005', '0.01', '0.025', '0.05', '0.1', '0.25', '0.5', '1', '2.5', '5', '10', '30', '+Inf'],
    )
    buckets.slice(1).forEach((b, i) => assert.ok(b.n >= buckets[i]!.n, `bucket le=${b.le} below the one before`))
    assert.equal(buckets.at(-1)!.n, before + 7)
    const sum = sample(text, 'http_request_duration_seconds_sum', labels)!
    assert.ok(sum > 0 && sum < 60, `sum ${sum}`)
    assert.match(text, /# TYPE http_request_duration_seconds histogram/)
  })

  it('ops paths answer wrong methods with 405 JSON', async () => {
    for (const path of ['/healthz', '/metrics', '/openapi.json']) {
      const r = await post(`${sys.root.invoice}${path}`, {})
      assert.equal(r.status, 405, path)
      assert.deepEqual(r.json, { error: 'Method not allowed' })
    }
  })
})

describe('ops: with ADMIN_TOKEN, workers and QUEUE_METRICS', () => {
  let sys: TestSystem
  // Every scheduled queue and invoice-render; capture-replay gets no worker, so its jobs stay put.
  const served = [...new Set([...JOBS.filter((j) => j.scheduler).map((j) => j.queue), QueueName.InvoiceRender])]
  before(async () => {
    sys = await startSystem({ workers: { queues: served }, env: { ADMIN_TOKEN: TOKEN, QUEUE_METRICS: 'true' } })
  })
  after(async () => sys?.stop())

  it('/readyz is 200 once workers registered the schedulers', async () => {
    const r = await get(`${sys.root.invoice}/readyz`)
    assert.equal(r.status, 200, r.text)
    assert.deepEqual(r.json, { status: 'ready', checks: { mongo: 'ok', redis: 'ok', schedulers: 'ok', workers: 'ok', accepting: 'ok' } })
  })

  it('/metrics needs the token (Bearer or Basic password) once ADMIN_TOKEN is set', async () => {
    const none = await get(`${sys.root.invoice}/metrics`)
    assert.equal(none.status, 401)
    assert.deepEqual(none.json, { error: 'Unauthorized: admin token required' })
    const wrong = await get(`${sys.root.invoice}/metrics`, { headers: { authorization: `Bearer ${TOKEN}x` } })
    assert.equal(wrong.status, 401)
    const short = await get(`${sys.root.invoice}/metrics`, { headers: { authorization: basic('admin', TOKEN.slice(0, -1)) } })
    assert.equal(short.status, 401)
    assert.equal((await get(`${sys.root.invoice}/metrics`, { headers: bearer })).status, 200)
    assert.equal((await get(`${sys.root.invoice}/metrics`, { headers: { authorization: basic('anyone', TOKEN) } })).status, 200)
  })

  it('an invoice shows up in HTTP, job, render and queue-depth metrics', async () => {
    const key = (await post(`${sys.url.invoice}/signup`, { email: 'metrics@example.com' })).json.api_key
    const inv = await post(`${sys.url.invoice}/invoice`, { items: [{ description: 'Gauge', quantity: 1, unit_price: 3 }] }, { key })
    assert.equal(inv.status, 200, inv.text)
    const m = (await get(`${sys.root.invoice}/metrics`, { headers: bearer })).text
    assert.ok(sample(m, 'http_request_duration_seconds_count', { route: '/api/v1/invoice', method: 'POST', status: '200' })! >= 1)
    assert.ok(sample(m, 'invoice_render_seconds_count')! >= 1)
    assert.ok(sample(m, 'queue_job_run_seconds_count', { queue: 'invoice-render', outcome: 'completed' })! >= 1)
    assert.ok(sample(m, 'queue_job_wait_seconds_count', { queue: 'invoice-render' })! >= 1)
    assert.ok(sample(m, 'queue_jobs', { queue: 'invoice-render', state: 'completed' })! >= 1)
    assert.equal(sample(m, 'queue_jobs', { queue: 'invoice-render', state: 'failed' }), 0)
    for (const name of ['webhook_forward_attempts_total', 'flag_evaluations_total', 'queue_job_failures_total']) assert.match(m, new RegExp(`# TYPE ${name} counter`))
  })

  it('the dashboard refuses missing or wrong tokens with a Basic challenge, and serves with the token', async () => {
    const none = await get(`${sys.root.invoice}/admin/queues`)
    assert.equal(none.status, 401)
    assert.match(none.headers.get('www-authenticate')!, /^Basic realm=/)
    assert.deepEqual(none.json, { error: 'Unauthorized: admin token required' })
    assert.equal((await get(`${sys.root.invoice}/admin/queues/api/queues`, { headers: { authorization: basic('admin', 'nope') } })).status, 401)
    const page = await get(`${sys.root.invoice}/admin/queues`, { headers: { authorization: basic('admin', TOKEN) } })
    assert.equal(page.status, 200)
    assert.match(page.headers.get('content-type')!, /text\/html/)
    const api = await get(`${sys.root.invoice}/admin/queues/api/queues`, { headers: bearer })
    assert.equal(api.status, 200)
    const names = (api.json.queues as Array<{ name: string }>).map((q) => q.name).sort()
    assert.deepEqual(names, Object.values(QueueName).sort())
  })

  it('retries and cleans failed jobs through the dashboard API', async function () {
    this.timeout(60_000)
    const queue = sys.platform.queues.queue(QueueName.CaptureReplay)
    const failOnce = async (id: string) => {
      await queue.add(QueueName.CaptureReplay, { probe: id }, { jobId: id })
      const conn = createRedis(sys.platform.redisUrl, 'blocking')
      const w = new Worker(QueueName.CaptureReplay, async () => { throw new Error('boom') }, { connection: conn, prefix: sys.config.QUEUE_PREFIX })
      await new Promise<void>((res) => w.on('failed', (job) => job?.id === id && res()))
      await w.close()
      conn.disconnect()
      assert.equal(await queue.getJobState(id), 'failed')
    }
    const base = `${sys.root.invoice}/admin/queues/api/queues/${QueueName.CaptureReplay}`

    await failOnce('ops-retry-1')
    assert.equal((await call('PUT', `${base}/retry/failed`)).status, 401)
    assert.equal(await queue.getJobState('ops-retry-1'), 'failed')
    const retry = await call('PUT', `${base}/retry/failed`, { headers: bearer })
    assert.equal(retry.status, 200, retry.text)
    assert.equal(await queue.getJobState('ops-retry-1'), 'waiting')

    await failOnce('ops-clean-1')
    // Bull Board's clean skips jobs that finished less than 5 s ago.
    await new Promise((r) => setTimeout(r, 5_500))
    assert.equal((await call('PUT', `${base}/clean/failed`)).status, 401)
    assert.equal(await queue.getJobState('ops-clean-1'), 'failed')
    const clean = await call('PUT', `${base}/clean/failed`, { headers: bearer })
    assert.equal(clean.status, 200, clean.text)
    assert.equal(await queue.getJob('ops-clean-1'), undefined)
  })
})

describe('ops: OpenAPI documents and the docs page', () => {
  let sys: TestSystem
  before(async () => {
    sys = await startSystem({ workers: false })
  })
  after(async () => sys?.stop())

  /** What each service's routers serve, read straight from @koa/router (HEAD is implied by GET). */
  function servedRoutes(name: string): Array<{ method: string; path: string }> {
    const svc = SERVICES.find((s) => s.name === name)!
    const { app, close } = svc.createApp(sys.platform)
    const out: Array<{ method: string; path: string }> = []
    for (const mw of app.middleware) {
      const router = (mw as { router?: Router }).router
      for (const layer of router?.stack ?? []) {
        for (const m of layer.methods) if (m !== 'HEAD') out.push({ method: m.toLowerCase(), path: String(layer.path) })
      }
    }
    void close()
    return out
  }

  const template = (p: string) => p.replace(/[{}]/g, '').replace(/[:*](\w+)/g, '{$1}')

  it('every route every registered service serves is in its /openapi.json (OpenAPI 3.1)', async () => {
    for (const svc of SERVICES) {
      const doc = (await get(`${sys.root[svc.name]}/openapi.json`)).json
      assert.equal(doc.openapi, '3.1.0')
      const routes = servedRoutes(svc.name)
      assert.ok(routes.length > 0, svc.name)
      for (const r of routes) {
        const op = doc.paths[template(r.path)]?.[r.method]
        assert.ok(op, `${svc.name}: ${r.method.toUpperCase()} ${r.path} is not documented`)
        for (const name of [...template(r.path).matchAll(/\{(\w+)\}/g)].map((x) => x[1])) {
          assert.ok(op.parameters.some((p: any) => p.in === 'path' && p.name === name && p.required), `${r.path}: path parameter ${name}`)
        }
      }
      // The ops endpoints are documented too.
      for (const p of ['/healthz', '/readyz', '/metrics']) assert.ok(doc.paths[p]?.get, `${svc.name}: ${p}`)
    }
  })

  it('documented paths without parameters are real routes (never the JSON route-miss 404)', async () => {
    for (const svc of SERVICES) {
      const doc = (await get(`${sys.root[svc.name]}/openapi.json`)).json
      for (const [path, ops] of Object.entries<Record<string, unknown>>(doc.paths)) {
        if (path.includes('{')) continue
        for (const method of Object.keys(ops)) {
          if (method !== 'get') continue // POSTs would create things; GETs are safe to probe
          const r = await call('GET', `${sys.root[svc.name]}${path}`)
          assert.ok(!(r.status === 404 && r.json?.error === 'Not found'), `${svc.name} GET ${path} -> ${r.status}`)
        }
      }
    }
  })

  it('request bodies carry the zod schema (invoice: items, limits)', async () => {
    const doc = (await get(`${sys.root.invoice}/openapi.json`)).json
    const body = doc.paths['/api/v1/invoice'].post.requestBody.content['application/json'].schema
    assert.equal(body.properties.items.type, 'array')
    assert.equal(body.properties.items.maxItems, 1000)
    assert.deepEqual(body.properties.items.items.required, ['description', 'quantity', 'unit_price'])
    const signup = doc.paths['/api/v1/signup'].post.requestBody.content['application/json'].schema
    assert.deepEqual(signup.required, ['email'])
  })

  it('/docs serves the page and npm-bundled assets under a strict CSP; unknown assets are 404 JSON', async () => {
    const page = await get(`${sys.root.invoice}/docs`)
    assert.equal(page.status, 200)
    assert.match(page.headers.get('content-type')!, /text\/html/)
    const csp = page.headers.get('content-security-policy')!
    assert.match(csp, /default-src 'none'/)
    assert.match(csp, /script-src 'self'(;|$)/)
    assert.ok(!/https?:/.test(page.text), 'no external URLs in the page')
    for (const [asset, type] of [['swagger-ui.css', /text\/css/], ['swagger-ui-bundle.js', /javascript/], ['init.js', /javascript/]] as const) {
      const r = await get(`${sys.root.invoice}/docs/${asset}`)
      assert.equal(r.status, 200, asset)
      assert.match(r.headers.get('content-type')!, type)
    }
    for (const bad of ['nope.js', '__proto__', '..%2Fpackage.json', 'index.html']) {
      const r = await get(`${sys.root.invoice}/docs/${bad}`)
      assert.equal(r.status, 404, bad)
      assert.deepEqual(r.json, { error: 'Not found' })
    }
  })

  it('a real browser renders every documented operation with no CSP violations', async function () {
    this.timeout(90_000)
    const browser = await launchChromium()
    try {
      const page = await browser.newPage()
      const problems: string[] = []
      page.on('console', (msg) => msg.type() === 'error' && problems.push(msg.text()))
      page.on('pageerror', (err) => problems.push(err.message))
      const external: string[] = []
      page.on('request', (req) => !req.url().startsWith(sys.root.invoice) && !req.url().startsWith('data:') && external.push(req.url()))
      await page.goto(`${sys.root.invoice}/docs`)
      await page.waitForSelector('.opblock', { timeout: 60_000 })
      const doc = (await get(`${sys.root.invoice}/openapi.json`)).json
      const operations = Object.values<Record<string, unknown>>(doc.paths).reduce((n, ops) => n + Object.keys(ops).length, 0)
      assert.equal(await page.locator('.opblock').count(), operations)
      assert.match(await page.locator('.title').first().innerText(), /queueworks invoice API/)
      assert.deepEqual(problems, [])
      assert.deepEqual(external, [])
    } finally {
      await browser.close()
    }
  })
})

describe('ops: requests that wait on a queue no worker consumes', function () {
  this.timeout(120_000)
  let sys: TestSystem
  before(async () => {
    sys = await startSystem({ services: ['invoice', 'webhooks'], workers: false })
  })
  after(async () => sys?.stop())

  const invoice = { items: [{ description: 'Needs a worker', quantity: 1, unit_price: 2 }] }
  const NO_RENDER_WORKER = 'No worker is consuming invoice-render yet (the workers are starting, or none is running). Please retry in a few seconds; this request was not counted.'

  async function until<T>(what: string, fn: () => Promise<T | undefined | false>, timeoutMs = 30_000): Promise<T> {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const v = await fn()
      if (v) return v
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
      await new Promise((r) => setTimeout(r, 100))
    }
  }

  /** 503 + Retry-After naming the queue, and nothing stored or counted for the account. */
  async function assertRefused(key: string, accountInvoicesBefore: number): Promise<void> {
    const r = await post(`${sys.url.invoice}/invoice`, invoice, { key })
    assert.equal(r.status, 503, r.text)
    assert.deepEqual(r.json, { error: NO_RENDER_WORKER })
    assert.equal(r.headers.get('retry-after'), '3')
    const usage = (await get(`${sys.url.invoice}/usage`, { key })).json
    assert.equal(usage.invoices_this_month, accountInvoicesBefore)
  }

  it('before any worker: invoices, demos and replays get 503 + Retry-After at once; nothing is stored or counted; /readyz says why', async () => {
    const key = (await post(`${sys.url.invoice}/signup`, { email: 'no-worker@example.com' })).json.api_key
    const storedBefore = await invoiceSlots(sys.platform.db).countDocuments({})
    await assertRefused(key, 0)
    const demo = await post(`${sys.url.invoice}/demo-invoice`, invoice)
    assert.equal(demo.status, 503, demo.text)
    assert.equal(demo.headers.get('retry-after'), '3')
    assert.equal(await invoiceSlots(sys.platform.db).countDocuments({}), storedBefore)
    assert.equal(await sys.platform.queues.queue(QueueName.InvoiceRender).count(), 0)

    const hookKey = await signup(sys, 'starter')
    const ep = await createEndpoint(sys, hookKey)
    assert.equal((await capture(ep.url, { body: 'replay me' })).status, 200)
    const replay = await post(`${sys.url.webhooks}/api/v1/endpoints/${ep.endpoint_id}/requests/1/replay`, { url: 'http://127.0.0.1:9/x' }, { key: hookKey })
    assert.equal(replay.status, 503, replay.text)
    assert.equal(replay.headers.get('retry-after'), '3')
    assert.match(replay.json.error, /^No worker is consuming capture-replay yet/)
    assert.equal(await replays(sys.platform.db).countDocuments({}), 0)

    const ready = await get(`${sys.root.webhooks}/readyz`)
    assert.equal(ready.status, 503)
    assert.equal(ready.json.checks.workers, 'failed: no worker is consuming capture-replay (requests that wait on it get 503)')
  })

  it('a worker that starts is counted on at once; one that stops cleanly, at once no more', async () => {
    const key = (await post(`${sys.url.invoice}/signup`, { email: 'worker-comes@example.com' })).json.api_key
    await assertRefused(key, 0)
    const workers = await startWorkers(sys.platform, { queues: [QueueName.InvoiceRender] })
    try {
      const r = await post(`${sys.url.invoice}/invoice`, invoice, { key })
      assert.equal(r.status, 200, r.text)
      assert.equal(r.headers.get('content-type'), 'application/pdf')
    } finally {
      await workers.close(5_000)
    }
    await assertRefused(key, 1)
  })

  it('a worker process killed (-9) stops being counted on within the heartbeat TTL, also with the CPU saturated', async () => {
    const key = (await post(`${sys.url.invoice}/signup`, { email: 'worker-dies@example.com' })).json.api_key
    const hog = startCpuHog()
    const child = spawnWorker(sys.env, ['--queues', QueueName.InvoiceRender])
    try {
      await until('the worker process to serve', async () => (await post(`${sys.url.invoice}/invoice`, invoice, { key })).status === 200, 90_000)
      child.kill('SIGKILL')
      await waitForExit(child)
      const killed = Date.now()
      await until('requests to be refused again', async () => (await post(`${sys.url.invoice}/invoice`, invoice, { key })).status === 503, HEARTBEAT_TTL_MS + 20_000)
      if (process.env.DEBUG_PRESENCE) console.log(`      refused again ${Date.now() - killed} ms after the kill`)
      await assertRefused(key, 1)
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
      await hog.stop()
    }
  })
})
