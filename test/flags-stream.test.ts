// The flag change stream (GET /ofrep/v1/stream) with two API replicas sharing one database and
// Redis: a change made through replica A reaches a stream held on replica B; the event's tag lets
// a re-fetch get the new values; Last-Event-ID resumes by state; heartbeats; environment isolation;
// the per-account open-stream limit counted across replicas; refused keys before the stream opens;
// the OFREP answers that advertise the stream. Clients: the `eventsource` package and raw fetch.
import assert from 'node:assert/strict'
import { EventSource } from 'eventsource'
import { setPlan } from '../src/platform/accounts.ts'
import { sha256 } from '../src/platform/ids.ts'
import type { HttpError } from '../src/platform/http/errors.ts'
import { StreamSlots } from '../src/flags/sdk/stream-slots.ts'
import { assertJsonError, call, get, post } from './helpers/http.ts'
import { startSystem, type TestSystem } from './helpers/system.ts'
import { startTcpProxy } from './helpers/tcp-proxy.ts'

interface Tenant {
  apiKey: string
  sdkKey: string
  projectId: string
  accountId: string
}

interface Received {
  id: string
  data: { type: string; etag: string }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

async function eventually<T>(check: () => T | undefined | false | Promise<T | undefined | false>, what: string, timeoutMs = 10_000): Promise<T> {
  const started = Date.now()
  for (;;) {
    const v = await check()
    if (v) return v
    if (Date.now() - started > timeoutMs) throw new Error(`${what}: not within ${timeoutMs} ms`)
    await sleep(20)
  }
}

/** An `eventsource` client with the SDK key in the Authorization header (its fetch option). */
function listen(url: string, sdkKey: string) {
  const events: Received[] = []
  const errors: unknown[] = []
  const es = new EventSource(url, {
    fetch: (input, init) => fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), authorization: `Bearer ${sdkKey}` } }),
  })
  es.onmessage = (e) => events.push({ id: e.lastEventId, data: JSON.parse(e.data) })
  es.onerror = (e) => errors.push(e)
  return {
    es,
    events,
    errors,
    close: () => es.close(),
    /** Waits for the n-th event (1-based) and returns it. */
    nth: (n: number, what = `event ${n}`) => eventually(() => events[n - 1], what),
  }
}

/** A raw stream read with fetch: every byte as text, for the wire format, heartbeats and Last-Event-ID. */
async function rawStream(url: string, headers: Record<string, string>) {
  const ac = new AbortController()
  const res = await fetch(url, { headers, signal: ac.signal })
  const state = { text: '', ended: false }
  if (res.body && res.headers.get('content-type')?.startsWith('text/event-stream')) {
    ;(async () => {
      const dec = new TextDecoder()
      try {
        for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) state.text += dec.decode(chunk, { stream: true })
      } catch {
        /* aborted */
      }
      state.ended = true
    })()
  }
  return { res, state, close: () => ac.abort() }
}

const dataOf = (text: string) => [...text.matchAll(/^data: (.*)$/gm)].map((m) => JSON.parse(m[1]!))

describe('flags: change stream (SSE) across two API replicas', function () {
  let a: TestSystem
  let b: TestSystem
  let n = 0
  const open: Array<{ close(): void }> = []

  const apiA = () => `${a.url.flags}/api/v1`
  const streamB = () => `${b.url.flags}/ofrep/v1/stream`
  const streamA = () => `${a.url.flags}/ofrep/v1/stream`

  async function signup(plan?: 'pro' | 'business'): Promise<Tenant> {
    const r = await post(`${apiA()}/signup`, { email: `stream${++n}@example.com` })
    assert.equal(r.status, 201, r.text)
    const acc = await a.platform.db.collection('accounts').findOne({ key_hash: sha256(r.json.api_key) })
    const t = { apiKey: r.json.api_key, sdkKey: r.json.sdk_key, projectId: r.json.project.id, accountId: String(acc!._id) }
    if (plan) await setPlan(a.platform.db, t.accountId, plan)
    return t
  }
  const createFlag = async (t: Tenant, body: Record<string, unknown>) => {
    const r = await post(`${apiA()}/projects/${t.projectId}/flags`, body, { key: t.apiKey })
    assert.equal(r.status, 201, r.text)
  }
  const updateFlag = async (t: Tenant, key: string, body: unknown, q = '') => {
    const r = await call('PUT', `${apiA()}/projects/${t.projectId}/flags/${key}${q}`, { json: body, key: t.apiKey })
    assert.equal(r.status, 200, r.text)
  }
  const track = <T extends { close(): void }>(s: T) => (open.push(s), s)

  before(async () => {
    const env = { FLAGS_STREAM_HEARTBEAT_MS: '300' }
    a = await startSystem({ services: ['flags'], workers: false, env })
    b = await startSystem({ services: ['flags'], workers: false, env: { ...env, MONGO_DB: a.env.MONGO_DB!, QUEUE_PREFIX: a.env.QUEUE_PREFIX! } })
  })
  afterEach(() => {
    for (const s of open.splice(0)) s.close()
  })
  after(async () => {
    await b?.stop()
    await a?.stop()
  })

  it('a change made on replica A is an event on a stream held on replica B; the re-fetch with its tag gets the new values', async () => {
    const t = await signup('pro')
    await createFlag(t, { key: 'banner', enabled: true, default_value: 'old' })
    const bulk = (etag?: string, q = '') =>
      call('POST', `${b.url.flags}/ofrep/v1/evaluate/flags${q}`, { json: { context: { targetingKey: 'u1' } }, key: t.sdkKey, headers: etag ? { 'if-none-match': etag } : {} })
    const first = await bulk()
    assert.equal(first.status, 200)
    assert.equal(first.json.flags[0].value, 'old')
    const etag = first.headers.get('etag')!

    const s = track(listen(streamB(), t.sdkKey))
    const hello = await s.nth(1, 'the connected event')
    assert.equal(hello.data.type, 'connected')
    assert.equal(hello.id, hello.data.etag)
    assert.match(hello.id, /^[\w-]{22}$/)

    await updateFlag(t, 'banner', { default_value: 'new' })
    const ev = await s.nth(2, 'the change event on replica B')
    assert.equal(ev.data.type, 'refetchEvaluation')
    assert.notEqual(ev.data.etag, hello.data.etag)
    assert.equal(ev.id, ev.data.etag)

    // What the provider does next (ADR-0008): the bulk re-fetch with its ETag and the event's tag.
    const again = await bulk(etag, `?flagConfigEtag=${encodeURIComponent(ev.data.etag)}`)
    assert.equal(again.status, 200, 'the ETag of the old values must not match any more')
    assert.equal(again.json.flags[0].value, 'new')
    assert.notEqual(again.headers.get('etag'), etag)
    assert.equal((await bulk(again.headers.get('etag')!)).status, 304)
    assert.equal(s.events.length, 2)
  })

  it('a re-fetch naming a tag this replica does not hold (flagConfigEtag) reads the flags again', async () => {
    const t = await signup('pro')
    await createFlag(t, { key: 'f', enabled: true, default_value: 'cached' })
    const bulk = (q = '') => call('POST', `${b.url.flags}/ofrep/v1/evaluate/flags${q}`, { json: { context: {} }, key: t.sdkKey })
    assert.equal((await bulk()).json.flags[0].value, 'cached')
    // Written behind every replica's back (no publish, no version): only a reload can see it.
    await a.platform.db.collection('flags').updateOne({ project_id: t.projectId, key: 'f' }, { $set: { default_value: 'stored' } })
    assert.equal((await bulk()).json.flags[0].value, 'cached')
    assert.equal((await bulk('?flagConfigEtag=AAAAAAAAAAAAAAAAAAAAAA')).json.flags[0].value, 'stored')
    assert.equal((await bulk()).json.flags[0].value, 'stored')
  })

  it('a stream on replica A hears changes made on replica B, for every kind of change (create, delete, segments)', async () => {
    const t = await signup('pro')
    const s = track(listen(streamA(), t.sdkKey))
    await s.nth(1)
    const apiB = `${b.url.flags}/api/v1`
    assert.equal((await post(`${apiB}/projects/${t.projectId}/flags`, { key: 'x', enabled: true }, { key: t.apiKey })).status, 201)
    assert.equal((await s.nth(2, 'create')).data.type, 'refetchEvaluation')
    assert.equal((await post(`${apiB}/projects/${t.projectId}/segments`, { name: 'beta', conditions: [{ attribute: 'plan', operator: 'eq', value: 'beta' }] }, { key: t.apiKey })).status, 201)
    await s.nth(3, 'segment create')
    assert.equal((await call('DELETE', `${apiB}/projects/${t.projectId}/flags/x`, { key: t.apiKey })).status, 204)
    await s.nth(4, 'delete')
    assert.equal(new Set(s.events.map((e) => e.id)).size, 4, 'every state has its own id')
  })

  it('a change in staging is not an event on production streams (and the other way round)', async () => {
    const t = await signup('pro')
    await createFlag(t, { key: 'f', enabled: true, default_value: 'p1' })
    const st = await post(`${apiA()}/projects/${t.projectId}/environments`, { name: 'staging' }, { key: t.apiKey })
    assert.equal(st.status, 201, st.text)
    const prod = track(listen(streamB(), t.sdkKey))
    const staging = track(listen(streamB(), st.json.sdk_key))
    await prod.nth(1)
    await staging.nth(1)
    assert.notEqual(prod.events[0]!.id, staging.events[0]!.id)

    await updateFlag(t, 'f', { enabled: true, default_value: 's1' }, '?environment=staging')
    await staging.nth(2, 'staging event')
    // Then a production change: production's next event is that one, so the staging change sent none.
    await updateFlag(t, 'f', { default_value: 'p2' })
    const p = await prod.nth(2, 'production event')
    assert.equal(p.data.type, 'refetchEvaluation')
    const prodValue = await call('POST', `${b.url.flags}/ofrep/v1/evaluate/flags/f`, { json: { context: {} }, key: t.sdkKey })
    assert.equal(prodValue.json.value, 'p2')
    // A project setting that changes no flag (allowed origins) moves no tag either.
    assert.equal((await call('PATCH', `${apiA()}/projects/${t.projectId}`, { json: { allowed_origins: ['https://shop.example.com'] }, key: t.apiKey })).status, 200)
    await updateFlag(t, 'f', { enabled: true, default_value: 's2' }, '?environment=staging')
    await staging.nth(3, 'second staging event')
    assert.equal(prod.events.length, 2)
    assert.equal(staging.events.length, 3)
  })

  it('Last-Event-ID: a reconnect after changes made meanwhile gets an event at once; one that is up to date gets none', async () => {
    const t = await signup('pro')
    await createFlag(t, { key: 'f', enabled: true })
    const s1 = track(listen(streamA(), t.sdkKey))
    const seen = (await s1.nth(1)).id
    s1.es.close()
    await updateFlag(t, 'f', { default_value: 'v2' })
    await updateFlag(t, 'f', { default_value: 'v3' })

    const behind = track(await rawStream(streamB(), { authorization: `Bearer ${t.sdkKey}`, 'last-event-id': seen }))
    assert.equal(behind.res.status, 200)
    const caught = await eventually(() => dataOf(behind.state.text)[0], 'the catch-up event')
    assert.equal(caught.type, 'refetchEvaluation')
    assert.notEqual(caught.etag, seen)
    assert.match(behind.state.text, new RegExp(`^id: ${caught.etag}$`, 'm'))
    assert.match(behind.state.text, /^retry: \d+$/m)

    // Up to date: nothing until the next change, and then exactly that change.
    const current = track(await rawStream(streamA(), { authorization: `Bearer ${t.sdkKey}`, 'last-event-id': caught.etag }))
    await eventually(() => current.state.text.includes(': ping'), 'a heartbeat on the up-to-date stream')
    assert.deepEqual(dataOf(current.state.text), [])
    await updateFlag(t, 'f', { default_value: 'v4' })
    const next = await eventually(() => dataOf(current.state.text)[0], 'the next change')
    assert.equal(next.type, 'refetchEvaluation')
    assert.notEqual(next.etag, caught.etag)
    await eventually(() => dataOf(behind.state.text)[1], 'the same change on the other stream')
    assert.equal(dataOf(behind.state.text)[1].etag, next.etag)
  })

  it('the eventsource client resumes by itself with Last-Event-ID after its connection is lost', async () => {
    const t = await signup('pro')
    await createFlag(t, { key: 'f', enabled: true })
    const proxy = await startTcpProxy(b.url.flags)
    try {
      const s = track(listen(`${proxy.url}/ofrep/v1/stream`, t.sdkKey))
      let opened = 0
      s.es.onopen = () => opened++
      await s.nth(1)
      await eventually(() => opened === 1, 'open')
      // The connection is lost (a load balancer restart); meanwhile the flag changes on A.
      await proxy.drop()
      await updateFlag(t, 'f', { default_value: 'while-away' })
      await updateFlag(t, 'f', { default_value: 'after-cut' })
      await proxy.restore()
      const ev = await s.nth(2, 'the change made while disconnected')
      assert.equal(opened, 2)
      // A `connected` event would mean the client came back without Last-Event-ID.
      assert.equal(ev.data.type, 'refetchEvaluation')
      const value = await call('POST', `${b.url.flags}/ofrep/v1/evaluate/flags/f`, { json: { context: {} }, key: t.sdkKey })
      assert.equal(value.json.value, 'after-cut')
    } finally {
      await proxy.close()
    }
  })

  it('heartbeat comments at the configured interval keep an idle stream alive', async () => {
    const t = await signup()
    const s = track(await rawStream(streamB(), { 'x-api-key': t.sdkKey }))
    assert.equal(s.res.status, 200)
    assert.match(s.res.headers.get('content-type')!, /^text\/event-stream/)
    assert.equal(s.res.headers.get('cache-control'), 'no-store, no-transform')
    await eventually(() => (s.state.text.match(/^: ping$/gm) ?? []).length >= 2, 'two heartbeats')
  })

  it('missing, unknown, malformed and rotated keys are a JSON 401 before any stream opens', async () => {
    const t = await signup()
    for (const headers of [{} as Record<string, string>, { authorization: 'Bearer fbsdk_nope' }, { authorization: 'Basic Zm9vOmJhcg==' }, { 'x-api-key': t.apiKey }]) {
      const r = await get(streamB(), { headers })
      assertJsonError(r, 401, 'Unauthorized: invalid or missing SDK key', { exact: true })
      assert.equal(r.headers.get('www-authenticate'), 'Bearer')
    }
    assertJsonError(await get(`${streamB()}?sdk_key=${'x'.repeat(5000)}`), 401)
    assertJsonError(await get(`${streamB()}?sdk_key=a&sdk_key=b`), 401)
    assertJsonError(await get(`${streamB()}?sdk_key=${encodeURIComponent('fbsdk_ünïcødé')}`), 401)
    // The header wins over the query string: a bad header is not rescued by a good query key.
    assertJsonError(await get(`${streamB()}?sdk_key=${t.sdkKey}`, { key: 'fbsdk_nope' }), 401)

    // A stream open with a key that is then rotated is ended; the old key cannot open another.
    const live = track(await rawStream(`${streamB()}?sdk_key=${t.sdkKey}`, {}))
    assert.equal(live.res.status, 200)
    await eventually(() => dataOf(live.state.text)[0], 'connected')
    const rot = await post(`${apiA()}/projects/${t.projectId}/sdk-key/rotate`, undefined, { key: t.apiKey })
    assert.equal(rot.status, 200, rot.text)
    await eventually(async () => (await get(streamB(), { key: t.sdkKey })).status === 401 || undefined, 'old key refused')
    assertJsonError(await get(streamA(), { key: t.sdkKey }), 401)
    await eventually(() => live.state.ended, 'the server ended the stream of the rotated key')
    const fresh = track(await rawStream(streamA(), { authorization: `Bearer ${rot.json.sdk_key}` }))
    assert.equal(fresh.res.status, 200)
  })

  it('a Last-Event-ID longer than any id is a 400 naming the header', async () => {
    const t = await signup()
    assertJsonError(await get(streamB(), { key: t.sdkKey, headers: { 'last-event-id': 'x'.repeat(201) } }), 400, /^Last-Event-ID must be at most 200 characters/)
  })

  it('the open-stream limit is per account across replicas: 429 naming the limit, a slot frees when a stream closes', async () => {
    const t = await signup() // free: 10 open streams
    const second = await post(`${apiA()}/projects`, { name: 'Second' }, { key: t.apiKey })
    assert.equal(second.status, 201, second.text)
    const streams = []
    for (let i = 0; i < 10; i++) {
      const key = i % 2 ? second.json.sdk_key : t.sdkKey
      const s = track(await rawStream(i < 5 ? streamA() : streamB(), { authorization: `Bearer ${key}` }))
      assert.equal(s.res.status, 200, `stream ${i}`)
      streams.push(s)
    }
    for (const url of [streamA(), streamB()]) {
      const r = await get(url, { key: second.json.sdk_key })
      assertJsonError(r, 429, 'Stream limit reached: the free plan allows 10 open change streams per account')
      assert.equal(r.json.limit, 'open_streams_per_account')
      assert.equal(r.json.max, 10)
      assert.ok(Number(r.headers.get('retry-after')) >= 1)
      assert.match(r.headers.get('content-type')!, /application\/json/)
    }
    // Another account is not affected.
    const other = await signup()
    assert.equal(track(await rawStream(streamB(), { authorization: `Bearer ${other.sdkKey}` })).res.status, 200)
    // Closing one frees its slot (the server hears the client go).
    streams[7]!.close()
    const reopened = await eventually(async () => {
      const s = await rawStream(streamA(), { authorization: `Bearer ${t.sdkKey}` })
      if (s.res.status === 200) return track(s)
      await s.res.arrayBuffer()
      return undefined
    }, 'a slot again')
    assert.ok(reopened)
    // A plan upgrade raises the limit at once (the key's plan is refreshed within 10 s).
    await setPlan(a.platform.db, t.accountId, 'starter')
    await eventually(async () => {
      const s = await rawStream(streamB(), { authorization: `Bearer ${t.sdkKey}` })
      if (s.res.status === 200) return track(s)
      await s.res.arrayBuffer()
      return undefined
    }, 'the starter limit', 20_000)
  })

  it('slots are leased: renewed while the stream lives, free again once a crashed replica stops renewing', async () => {
    const t = await signup()
    // Leases long enough that a loaded machine renews them in time (every third of a lease).
    const x = new StreamSlots(a.platform, { leaseMs: 1_500 })
    const y = new StreamSlots(b.platform, { leaseMs: 1_500 })
    try {
      for (let i = 0; i < 10; i++) await x.acquire(t.accountId, 'free')
      await assert.rejects(y.acquire(t.accountId, 'free'), (e: HttpError) => e.status === 429)
      // Past the first lease the renewed slots are still taken.
      await sleep(2_500)
      await assert.rejects(y.acquire(t.accountId, 'free'), (e: HttpError) => e.status === 429)
      // Replica x "crashes": it stops renewing and never releases.
      x.close()
      const release = await eventually(() => y.acquire(t.accountId, 'free').catch(() => undefined), 'a slot after the lease ran out')
      release()
    } finally {
      x.close()
      y.close()
    }
  })

  it('OFREP answers advertise the stream as ADR-0008 eventStreams (bulk evaluation and configuration)', async () => {
    const t = await signup()
    const cfg = await get(`${b.url.flags}/ofrep/v1/configuration`, { key: t.sdkKey })
    assert.equal(cfg.status, 200)
    const expected = [{ type: 'sse', endpoint: { requestUri: `/ofrep/v1/stream?sdk_key=${t.sdkKey}` }, inactivityDelaySec: 120 }]
    assert.deepEqual(cfg.json.capabilities.cacheInvalidation.eventStreams, expected)
    assert.deepEqual(cfg.json.capabilities.cacheInvalidation.polling, { enabled: true, minPollingIntervalMs: 1_000 })
    const bulk = await call('POST', `${b.url.flags}/ofrep/v1/evaluate/flags`, { json: { context: {} }, key: t.sdkKey })
    assert.deepEqual(bulk.json.eventStreams, expected)
    // The advertised URL works as it stands (what a browser's EventSource does with it).
    const es = track(new EventSource(b.url.flags + expected[0]!.endpoint.requestUri))
    const first = await new Promise<MessageEvent>((resolve, reject) => {
      es.onmessage = resolve
      es.onerror = reject
    })
    assert.equal(JSON.parse(first.data).type, 'connected')
  })
})
