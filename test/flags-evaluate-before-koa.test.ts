// POST /api/v1/evaluate answered by the server's request listener before Koa builds a context
// (src/platform/http/before-koa.ts): one flags app served by two servers, one through that
// listener and one through the app's own Koa callback (where the hot route is the first
// middleware, as before). Every answer — 200s, each error status with its headers (CORS, Retry-After),
// a Redis outage's 503 — is the same on both; compressed bodies, other media types and other
// methods go on to the general stack; request ids, metrics hooks and the access log are kept.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import http, { type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { gzipSync } from 'node:zlib'
import type Koa from 'koa'
import { setPlan } from '../src/platform/accounts.ts'
import { onRequestDone, type FinishedRequest } from '../src/platform/http/request-lifecycle.ts'
import { requestListener } from '../src/platform/http/before-koa.ts'
import { sha256 } from '../src/platform/ids.ts'
import { startRedisServer, type EmbeddedRedis } from '../src/embedded/redis-server.ts'
import { flagsService } from '../src/flags/service.ts'
import { call, post, type Res } from './helpers/http.ts'
import { freePort } from './helpers/ports.ts'
import { startSystem, waitForExit, type TestSystem } from './helpers/system.ts'

const APP = 'https://app.example.com'
const OTHER = 'https://evil.example.net'
const PATH = '/api/v1/evaluate'

interface Tenant {
  apiKey: string
  sdkKey: string
  projectId: string
  accountId: string
}

// Headers that differ between any two answers, whoever gives them.
const VOLATILE = new Set(['date', 'x-request-id', 'retry-after'])

function headerMap(r: Res): Record<string, string> {
  const out: Record<string, string> = {}
  r.headers.forEach((v, k) => {
    if (!VOLATILE.has(k)) out[k] = v
  })
  return out
}

/** The same answer: status, body, and every header but the date, a fresh request id and Retry-After's count. */
function assertSameAnswer(a: Res, b: Res, what: string): void {
  assert.equal(a.status, b.status, `${what}: ${a.text} / ${b.text}`)
  assert.equal(a.text, b.text, what)
  assert.deepEqual(headerMap(a), headerMap(b), what)
  assert.equal(a.headers.has('retry-after'), b.headers.has('retry-after'), what)
  assert.ok(a.headers.get('x-request-id'), `${what}: X-Request-Id`)
}

describe('flags: POST /api/v1/evaluate answered before Koa', () => {
  let sys: TestSystem
  let redis: EmbeddedRedis
  let app: Koa
  let closeApp: () => Promise<void>
  let beforeKoa: Server
  let inKoa: Server
  let urlBefore: string
  let urlInKoa: string
  /** Every request Koa's middleware saw (the first middleware of the app records it). */
  const koaSeen: string[] = []
  /** What the request hooks (metrics) were given. */
  const finished: Array<{ method: string; path: string; status: number; route: unknown; reqId: unknown; service: unknown }> = []
  let open: Tenant
  let closed: Tenant
  let n = 0

  async function signup(plan?: 'business'): Promise<Tenant> {
    const r = await post(`${sys.url.flags}/api/v1/signup`, { email: `bk${++n}@example.com` })
    assert.equal(r.status, 201, r.text)
    const acc = await sys.platform.db.collection('accounts').findOne({ key_hash: sha256(r.json.api_key) })
    const t = { apiKey: r.json.api_key, sdkKey: r.json.sdk_key, projectId: r.json.project.id, accountId: String(acc!._id) }
    if (plan) await setPlan(sys.platform.db, t.accountId, plan)
    const f = await post(`${sys.url.flags}/api/v1/projects/${t.projectId}/flags`, { key: 'on', enabled: true, default_value: 'a', rules: [{ conditions: [{ attribute: 'plan', operator: 'eq', value: 'pro' }], value: 'b' }] }, { key: t.apiKey })
    assert.equal(f.status, 201, f.text)
    return t
  }

  const listen = (handler: http.RequestListener) =>
    new Promise<Server>((resolve) => {
      const s = http.createServer(handler).listen(0, '127.0.0.1', () => resolve(s))
    })
  const urlOf = (s: Server) => `http://127.0.0.1:${(s.address() as AddressInfo).port}`
  type Opts = Parameters<typeof call>[2]
  /** The same request to both servers, one after the other. */
  async function both(method: string, opts: Opts, path = PATH): Promise<[Res, Res]> {
    const a = await call(method, `${urlBefore}${path}`, opts)
    const b = await call(method, `${urlInKoa}${path}`, opts)
    return [a, b]
  }
  /** Runs `send` and returns what Koa saw meanwhile. */
  async function seenByKoa(send: () => Promise<unknown>): Promise<string[]> {
    const from = koaSeen.length
    await send()
    return koaSeen.slice(from)
  }
  const body = (t: Tenant, extra: Record<string, unknown> = {}) => ({ sdk_key: t.sdkKey, flags: ['on', 'nope'], context: { plan: 'pro' }, ...extra })

  before(async () => {
    sys = await startSystem({ services: ['flags'], workers: false })
    // The app's rate-limit counters (and cache subscriber) use a redis-server of this file's own,
    // which the outage test stops; its data is the system's.
    redis = await startRedisServer({ port: await freePort(), appendonly: false })
    const made = flagsService.createApp({ ...sys.platform, redisUrl: redis.url })
    app = made.app
    closeApp = made.close
    // First of all middleware, before the hot route's own: whatever Koa runs for, it sees.
    app.middleware.unshift((ctx, next) => {
      koaSeen.push(`${ctx.method} ${ctx.path}`)
      return next()
    })
    beforeKoa = await listen(requestListener(app))
    inKoa = await listen(app.callback())
    urlBefore = urlOf(beforeKoa)
    urlInKoa = urlOf(inKoa)
    onRequestDone((r: FinishedRequest) => {
      finished.push({ method: r.method, path: r.path, status: r.status, route: r.state.route, reqId: r.state.reqId, service: r.state.service })
    })
    open = await signup('business')
    closed = await signup('business')
    const r = await call('PATCH', `${sys.url.flags}/api/v1/projects/${closed.projectId}`, { json: { allowed_origins: [APP] }, key: closed.apiKey })
    assert.equal(r.status, 200, r.text)
  })
  after(async () => {
    await Promise.all([beforeKoa, inKoa].map((s) => s && new Promise((r) => s.close(r))))
    await closeApp?.()
    await redis?.child.stop()
    await sys?.stop()
  })

  it('answers 200s exactly as the in-Koa hot route does, without Koa running at all', async () => {
    const cases: Array<[string, Opts]> = [
      ['plain', { json: body(open) }],
      ['charset-qualified type', { json: body(open), headers: { 'content-type': 'application/json; charset=utf-8' } }],
      ['allowed origin', { json: body(open), headers: { origin: OTHER } }],
      ['origin the project refuses', { json: body(closed), headers: { origin: OTHER } }],
      ['origin the project lists', { json: body(closed), headers: { origin: APP } }],
    ]
    for (const [what, opts] of cases) {
      let a!: Res
      assert.deepEqual(await seenByKoa(async () => (a = await call('POST', `${urlBefore}${PATH}`, opts))), [], what)
      let b!: Res
      assert.deepEqual(await seenByKoa(async () => (b = await call('POST', `${urlInKoa}${PATH}`, opts))), [`POST ${PATH}`], what)
      assertSameAnswer(a, b, what)
      assert.equal(a.status, 200, a.text)
      assert.deepEqual(a.json.flags.on, { value: 'b', reason: 'TARGETING_MATCH', rule_index: 0 })
    }
    // A query string does not keep a request from the listener.
    assert.deepEqual(await seenByKoa(async () => assert.equal((await call('POST', `${urlBefore}${PATH}?v=1`, { json: body(open) })).status, 200)), [])
    const [granted] = await both('POST', { json: body(closed), headers: { origin: APP } })
    assert.equal(granted.headers.get('access-control-allow-origin'), APP)
    const [refused] = await both('POST', { json: body(closed), headers: { origin: OTHER } })
    assert.equal(refused.headers.get('access-control-allow-origin'), null)
    assert.equal(refused.headers.get('vary'), 'Origin')
  })

  it('gives every error the same status, JSON message and headers (CORS included)', async () => {
    const huge = JSON.stringify({ sdk_key: open.sdkKey, context: { pad: 'x'.repeat(1024 * 1024) } })
    const cases: Array<[string, Opts, number, string | RegExp]> = [
      ['malformed JSON', { raw: `{"sdk_key":"${open.sdkKey}"`, headers: { origin: OTHER } }, 400, 'Malformed JSON body'],
      ['a __proto__ key', { raw: `{"sdk_key":"${open.sdkKey}","__proto__":{"x":1}}` }, 400, 'Malformed JSON body'],
      ['a bad field, the project refusing the origin', { json: body(closed, { flags: 'on' }), headers: { origin: OTHER } }, 400, /flags/],
      ['a bad field, the project listing the origin', { json: body(closed, { flags: 'on' }), headers: { origin: APP } }, 400, /flags/],
      ['too large', { raw: huge, headers: { origin: OTHER } }, 413, 'Request body too large'],
      ['no key', { json: { flags: ['on'] }, headers: { origin: OTHER } }, 401, 'Unauthorized: invalid or missing SDK key'],
      ['an unknown key', { json: { sdk_key: 'fbsdk_nope' } }, 401, 'Unauthorized: invalid or missing SDK key'],
      ['the API key', { json: { sdk_key: open.apiKey } }, 401, 'Unauthorized: invalid or missing SDK key'],
      ['not an object', { raw: '[]' }, 401, 'Unauthorized: invalid or missing SDK key'],
    ]
    for (const [what, opts, status, message] of cases) {
      let a!: Res
      let b!: Res
      assert.deepEqual(await seenByKoa(async () => ([a, b] = await both('POST', opts))), [`POST ${PATH}`], what)
      assertSameAnswer(a, b, what)
      assert.equal(a.status, status, `${what}: ${a.text}`)
      if (typeof message === 'string') assert.equal(a.json.error, message, what)
      else assert.match(a.json.error, message, what)
      assert.equal(a.headers.get('content-type'), 'application/json; charset=utf-8', what)
      assert.equal(Number(a.headers.get('content-length')), a.body.length, what)
    }
    // Before the project is known, any origin may read the error; after, the project decides.
    const [early] = await both('POST', { json: { flags: ['on'] }, headers: { origin: OTHER } })
    assert.equal(early.headers.get('access-control-allow-origin'), OTHER)
    assert.match(early.headers.get('access-control-expose-headers') ?? '', /Retry-After/)
    const [late] = await both('POST', { json: body(closed, { flags: 'on' }), headers: { origin: OTHER } })
    assert.equal(late.headers.get('access-control-allow-origin'), null)
    // A caller's sane request id is kept on errors, anything else replaced.
    const id = 'bk-req-0123456789'
    const [kept] = await both('POST', { json: { sdk_key: 'fbsdk_nope' }, headers: { 'x-request-id': id } })
    assert.equal(kept.headers.get('x-request-id'), id)
    const [fresh] = await both('POST', { raw: '{', headers: { 'x-request-id': 'has spaces <b>' } })
    assert.match(fresh.headers.get('x-request-id')!, /^[0-9a-f-]{36}$/)
  })

  it('a 429 past the plan rate: same message, Retry-After and CORS on both', async () => {
    // Free plan: 20 evaluation requests per second per SDK key; one key per server.
    const [t1, t2] = [await signup(), await signup()]
    const burst = (url: string, t: Tenant) => Promise.all(Array.from({ length: 30 }, () => call('POST', `${url}${PATH}`, { json: body(t), headers: { origin: OTHER } })))
    const seen = await seenByKoa(async () => {
      const a = (await burst(urlBefore, t1)).filter((r) => r.status === 429)
      const b = (await burst(urlInKoa, t2)).filter((r) => r.status === 429)
      assert.ok(a.length >= 10 && b.length >= 10, `${a.length} / ${b.length} refused`)
      assertSameAnswer(a[0]!, b[0]!, '429')
      assert.equal(a[0]!.json.error, 'Rate limit exceeded: the free plan allows 20 evaluation requests per second per SDK key')
      assert.ok(Number(a[0]!.headers.get('retry-after')) >= 1)
      assert.equal(a[0]!.headers.get('access-control-allow-origin'), OTHER)
    })
    assert.equal(seen.length, 30, 'only the in-Koa server’s requests reach Koa')
  })

  it('leaves compressed bodies, other media types and other methods to the general stack, which answers as before', async () => {
    const text = JSON.stringify(body(open))
    const cases: Array<[string, string, Opts, number]> = [
      ['gzip body', 'POST', { raw: gzipSync(text), headers: { 'content-encoding': 'gzip' } }, 200],
      ['text/plain', 'POST', { raw: text, headers: { 'content-type': 'text/plain' } }, 415],
      ['no body', 'POST', {}, 401],
      ['preflight', 'OPTIONS', { headers: { origin: OTHER, 'access-control-request-method': 'POST' } }, 204],
      ['GET', 'GET', {}, 405],
      ['HEAD', 'HEAD', {}, 405],
    ]
    for (const [what, method, opts, status] of cases) {
      let a!: Res
      assert.deepEqual(await seenByKoa(async () => (a = await call(method, `${urlBefore}${PATH}`, opts))), [`${method} ${PATH}`], what)
      const b = await call(method, `${urlInKoa}${PATH}`, opts)
      assert.equal(a.status, status, `${what}: ${a.text}`)
      assertSameAnswer(a, b, what)
    }
    // Another path next to it is not taken for it.
    assert.deepEqual(await seenByKoa(() => call('POST', `${urlBefore}${PATH}x`, { json: body(open) })), [`POST ${PATH}x`])
  })

  it('keeps the request id, the request hooks (metrics) and the route label', async () => {
    const scrape = async () => (await call('GET', `${sys.url.flags}/metrics`)).text
    const count = (text: string, status: number) => Number(text.match(new RegExp(`http_request_duration_seconds_count\\{[^}]*route="${PATH}"[^}]*status="${status}"[^}]*\\} (\\d+)`))?.[1] ?? 0)
    const m0 = await scrape()
    const from = finished.length
    const id = 'bk-metrics-0123456789'
    const ok = await call('POST', `${urlBefore}${PATH}`, { json: body(open), headers: { 'x-request-id': id } })
    assert.equal(ok.headers.get('x-request-id'), id)
    const denied = await call('POST', `${urlBefore}${PATH}`, { json: { sdk_key: 'fbsdk_nope' } })
    const mine = finished.slice(from).filter((f) => f.path === PATH)
    assert.deepEqual(mine, [
      { method: 'POST', path: PATH, status: 200, route: PATH, reqId: id, service: 'flags' },
      { method: 'POST', path: PATH, status: 401, route: PATH, reqId: denied.headers.get('x-request-id'), service: 'flags' },
    ])
    const m1 = await scrape()
    // The system's own requests count too (the scrape itself is another route): at least ours.
    assert.ok(count(m1, 200) - count(m0, 200) >= 1)
    assert.ok(count(m1, 401) - count(m0, 401) >= 1)
  })

  it('a fault of ours after the route (a request hook that throws) is a logged 500 JSON, never a crash; a written answer still arrives', async () => {
    const FAULTY = /^bk-hook-throws-/
    onRequestDone((r) => {
      if (FAULTY.test(String(r.state.reqId))) throw new Error('hook failed (test)')
    })
    const denied = await call('POST', `${urlBefore}${PATH}`, { json: { sdk_key: 'fbsdk_nope' }, headers: { 'x-request-id': 'bk-hook-throws-1' } })
    assert.equal(denied.status, 500, denied.text)
    assert.deepEqual(denied.json, { error: 'Internal server error' })
    const ok = await call('POST', `${urlBefore}${PATH}`, { json: body(open), headers: { 'x-request-id': 'bk-hook-throws-2' } })
    assert.equal(ok.status, 200, ok.text)
    assert.equal(ok.json.flags.on.value, 'b')
    assert.equal((await call('POST', `${urlBefore}${PATH}`, { json: body(open) })).status, 200)
  })

  it('a Redis outage at the rate limiter is a 503 with Retry-After, alike on both', async () => {
    // A fresh key: its first point needs a lease from Redis, which is gone.
    const t = await signup()
    await redis.child.stop()
    const [a, b] = await both('POST', { json: body(t), headers: { origin: OTHER } })
    assertSameAnswer(a, b, '503')
    assert.equal(a.status, 503, a.text)
    assert.equal(a.json.error, 'Service temporarily unavailable, please retry')
    assert.ok(Number(a.headers.get('retry-after')) >= 1)
    assert.equal(a.headers.get('access-control-allow-origin'), OTHER)
  })

  it('writes the access log line of a hot-route request (an API process at debug level)', async () => {
    const port = await freePort([3001, 3002, 3003])
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'api', '--service', 'flags'], {
      env: { ...process.env, ...sys.env, FLAGS_PORT: String(port), LOG_LEVEL: 'debug' },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let out = ''
    let err = ''
    child.stdout!.on('data', (b) => (out += b))
    child.stderr!.on('data', (b) => (err += b))
    const lines = () =>
      out
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l))
        .filter((l) => l.msg === 'request' && l.path === PATH)
    try {
      const url = `http://127.0.0.1:${port}${PATH}`
      const deadline = Date.now() + 30_000
      for (;;) {
        if (child.exitCode !== null) throw new Error(`api process exited: ${err}`)
        if (await fetch(url, { method: 'POST' }).then((r) => r.status === 401, () => false)) break
        if (Date.now() > deadline) throw new Error('api process did not answer within 30 s')
        await new Promise((r) => setTimeout(r, 100))
      }
      const ok = await call('POST', url, { json: body(open), headers: { 'x-request-id': 'bk-log-0123456789' } })
      assert.equal(ok.status, 200, ok.text)
      const bad = await call('POST', url, { raw: '{', headers: { 'x-request-id': 'bk-log-bad-0123456' } })
      assert.equal(bad.status, 400)
      const logOf = (reqId: string) => lines().find((l) => l.reqId === reqId)
      for (const deadlineLog = Date.now() + 10_000; !(logOf('bk-log-0123456789') && logOf('bk-log-bad-0123456')); ) {
        if (Date.now() > deadlineLog) throw new Error(`no access log lines in:\n${out}`)
        await new Promise((r) => setTimeout(r, 50))
      }
      assert.deepEqual(
        [logOf('bk-log-0123456789'), logOf('bk-log-bad-0123456')].map((l) => [l.level, l.service, l.method, l.path, l.route, l.status, typeof l.ms]),
        [
          [20, 'flags', 'POST', PATH, PATH, 200, 'number'],
          [30, 'flags', 'POST', PATH, PATH, 400, 'number'],
        ],
      )
    } finally {
      child.kill('SIGTERM')
      await waitForExit(child)
    }
  })
})
