// The live stream (GET …/stream): 4xx before it opens, live captures and forward updates,
// Last-Event-ID resume from MongoDB, a second API replica receiving what the first captured,
// and the `listen` CLI's local-delivery report shown on the capture.
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import type { EventSourceMessage } from 'eventsource-parser'
import { startSystem, type TestSystem } from './helpers/system.ts'
import { get, post } from './helpers/http.ts'
import { api, capture, createEndpoint, signup, startTarget, waitFor, type Target } from './helpers/webhooks.ts'
import { openStream } from '../scripts/listen/stream.ts'

interface Opened {
  events: EventSourceMessage[]
  close(): void
}

async function stream(root: string, token: string, key: string, lastEventId?: number): Promise<Opened> {
  const events: EventSourceMessage[] = []
  const ac = new AbortController()
  const s = openStream({ api: root, token, key, lastEventId, signal: ac.signal, onEvent: (e) => events.push(e) })
  s.ended.catch(() => undefined)
  await s.opened
  return { events, close: () => ac.abort() }
}

const captures = (o: Opened) => o.events.filter((e) => e.event === 'capture').map((e) => ({ id: Number(e.id), ...JSON.parse(e.data) }))

describe('webhooks: live stream', () => {
  let sys: TestSystem
  let replica: TestSystem | null = null
  const open: Opened[] = []
  const targets: Target[] = []
  before(async () => {
    sys = await startSystem({ services: ['webhooks'], env: { WEBHOOK_FORWARD_SCHEDULE_MS: '0,200', WEBHOOK_FORWARD_TIMEOUT_MS: '3000' } })
  })
  after(async () => {
    for (const o of open) o.close()
    await Promise.all(targets.map((t) => t.close()))
    await replica?.stop()
    await sys?.stop()
  })
  const listen = async (...a: Parameters<typeof stream>) => {
    const o = await stream(...a)
    open.push(o)
    return o
  }

  it('refuses before the stream opens: no key 401, unknown or foreign endpoint 404, bad Last-Event-ID 400', async () => {
    const key = await signup(sys)
    const other = await signup(sys)
    const ep = await createEndpoint(sys, key)
    const url = api(sys, `/endpoints/${ep.endpoint_id}/stream`)
    const none = await get(url)
    assert.equal(none.status, 401)
    const foreign = await get(url, { key: other })
    assert.equal(foreign.status, 404)
    assert.deepEqual(foreign.json, { error: 'Endpoint not found' })
    assert.equal(foreign.headers.get('content-type')?.startsWith('application/json'), true)
    const unknown = await get(api(sys, '/endpoints/nosuchtoken/stream'), { key })
    assert.equal(unknown.status, 404)
    const bad = await get(url, { key, headers: { 'last-event-id': 'abc' } })
    assert.equal(bad.status, 400)
    assert.match(bad.json.error, /Last-Event-ID/)
    const badQuery = await get(`${url}?last_event_id=-1`, { key })
    assert.equal(badQuery.status, 400)
    assert.match(badQuery.json.error, /last_event_id/)
  })

  it('sends each new capture as an event whose id is the capture id, with exact bytes; sandboxed and not cached', async () => {
    const key = await signup(sys)
    const ep = await createEndpoint(sys, key)
    const res = await fetch(api(sys, `/endpoints/${ep.endpoint_id}/stream`), { headers: { authorization: `Bearer ${key}` } })
    assert.equal(res.status, 200)
    assert.match(res.headers.get('content-type')!, /^text\/event-stream/)
    assert.match(res.headers.get('content-security-policy')!, /sandbox/)
    await res.body!.cancel()
    const s = await listen(sys.root.webhooks, ep.endpoint_id, key)
    const bin = randomBytes(300)
    await capture(`${ep.url}/a/b?x=1`, { method: 'PUT', body: bin, headers: { 'x-sig': 'v1' } })
    await capture(ep.url, { body: '{"hello":"wörld"}', headers: { 'content-type': 'application/json' } })
    const got = await waitFor(() => captures(s).length >= 2 && captures(s), 10_000, 'two capture events')
    assert.deepEqual(got.map((c) => c.id), [1, 2])
    assert.equal(got[0].method, 'PUT')
    assert.equal(got[0].path, `/hook/${ep.endpoint_id}/a/b`)
    assert.equal(got[0].query, 'x=1')
    assert.equal(got[0].headers['x-sig'], 'v1')
    assert.equal(got[0].body_encoding, 'base64')
    assert.deepEqual(Buffer.from(got[0].body, 'base64'), bin)
    assert.equal(got[1].body, '{"hello":"wörld"}')
  })

  it('a burst of 40 concurrent captures reaches the stream whole: every id once (publishes of a busy channel are pipelined)', async () => {
    const key = await signup(sys, 'starter')
    const ep = await createEndpoint(sys, key)
    const s = await listen(sys.root.webhooks, ep.endpoint_id, key)
    const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => capture(ep.url, { body: `burst ${i}` })))
    assert.deepEqual(answers.map((r) => r.status), new Array(40).fill(200))
    const got = await waitFor(() => captures(s).length >= 40 && captures(s), 10_000, '40 capture events')
    const stored = (await get(api(sys, `/endpoints/${ep.endpoint_id}/requests?limit=100`), { key })).json.requests.map((r: { id: number }) => r.id)
    assert.deepEqual(got.map((c) => c.id).sort((a, b) => a - b), [...stored].sort((a: number, b: number) => a - b))
    assert.deepEqual(got.map((c) => c.body).sort(), Array.from({ length: 40 }, (_, i) => `burst ${i}`).sort())
  })

  it('resumes after Last-Event-ID from MongoDB, then goes live, with nothing missed or repeated', async () => {
    const key = await signup(sys)
    const ep = await createEndpoint(sys, key)
    for (let i = 0; i < 5; i++) await capture(ep.url, { body: `n${i + 1}` })
    const s = await listen(sys.root.webhooks, ep.endpoint_id, key, 2)
    await waitFor(() => captures(s).length >= 3, 10_000, 'catch-up')
    await capture(ep.url, { body: 'n6' })
    const got = await waitFor(() => captures(s).length >= 4 && captures(s), 10_000, 'live after catch-up')
    assert.deepEqual(got.map((c) => c.id), [3, 4, 5, 6])
    assert.deepEqual(got.map((c) => c.body), ['n3', 'n4', 'n5', 'n6'])
  })

  it('gives every stream open on one endpoint the same events in capture order (serialised once, shared), and none of another endpoint', async () => {
    const key = await signup(sys)
    const ep = await createEndpoint(sys, key)
    const other = await createEndpoint(sys, key)
    const streams = await Promise.all(Array.from({ length: 3 }, () => listen(sys.root.webhooks, ep.endpoint_id, key)))
    const elsewhere = await listen(sys.root.webhooks, other.endpoint_id, key)
    for (let i = 1; i <= 4; i++) await capture(ep.url, { body: `fan ${i}`, headers: { 'x-n': String(i) } })
    await capture(other.url, { body: 'not for them' })
    for (const s of streams) {
      const got = await waitFor(() => captures(s).length >= 4 && captures(s), 10_000, 'four events on each stream')
      assert.deepEqual(got.map((c) => [c.id, c.body, c.headers['x-n']]), [1, 2, 3, 4].map((n) => [n, `fan ${n}`, String(n)]))
    }
    const theirs = await waitFor(() => captures(elsewhere)[0], 10_000, 'the other endpoint\'s event')
    assert.equal(theirs.body, 'not for them')
    for (const s of streams) assert.equal(captures(s).length, 4, 'no event of another endpoint')
  })

  it('works across API replicas: a capture taken by replica A reaches a stream on replica B', async () => {
    replica = await startSystem({ services: ['webhooks'], workers: false, env: { MONGO_DB: sys.env.MONGO_DB!, QUEUE_PREFIX: sys.env.QUEUE_PREFIX! } })
    assert.notEqual(replica.root.webhooks, sys.root.webhooks)
    const key = await signup(sys)
    const ep = await createEndpoint(sys, key)
    const onB = await listen(replica.root.webhooks, ep.endpoint_id, key)
    await capture(`${sys.root.webhooks}/hook/${ep.endpoint_id}`, { body: 'via A' })
    const got = await waitFor(() => captures(onB)[0], 10_000, 'event on replica B')
    assert.equal(got.body, 'via A')
  })

  it('sends forward-attempt updates, and local-delivery reports that also show on the capture', async () => {
    const t = await startTarget((_r, i, res) => {
      res.statusCode = i === 0 ? 503 : 200
      res.end()
    })
    targets.push(t)
    const key = await signup(sys, 'starter')
    const ep = await createEndpoint(sys, key, { forward_url: t.url })
    const s = await listen(sys.root.webhooks, ep.endpoint_id, key)
    await capture(ep.url, { body: 'fwd' })
    const delivered = await waitFor(
      () => s.events.filter((e) => e.event === 'forward').map((e) => JSON.parse(e.data)).find((d) => d.forward.status === 'delivered'),
      15_000,
      'a delivered forward event',
    )
    assert.equal(delivered.id, 1)
    assert.equal(delivered.attempt.status, 200)
    assert.ok(s.events.some((e) => e.event === 'forward' && JSON.parse(e.data).attempt?.status === 503), 'the failed attempt was sent too')

    const report = { url: 'http://localhost:8080/x', status: 201, latency_ms: 12, body_preview: 'created', error: null }
    const bad = await post(api(sys, `/endpoints/${ep.endpoint_id}/requests/1/local-delivery`), { ...report, status: 'x' }, { key })
    assert.equal(bad.status, 400)
    assert.match(bad.json.error, /status/)
    const other = await signup(sys)
    assert.equal((await post(api(sys, `/endpoints/${ep.endpoint_id}/requests/1/local-delivery`), report, { key: other })).status, 404)
    assert.equal((await post(api(sys, `/endpoints/${ep.endpoint_id}/requests/99/local-delivery`), report, { key })).status, 404)
    const ok = await post(api(sys, `/endpoints/${ep.endpoint_id}/requests/1/local-delivery`), report, { key })
    assert.equal(ok.status, 200)
    const ev = await waitFor(() => s.events.find((e) => e.event === 'local_delivery'), 10_000, 'local_delivery event')
    assert.equal(JSON.parse(ev.data).local_delivery.status, 201)
    const shown = (await get(api(sys, `/endpoints/${ep.endpoint_id}/requests/1`), { key })).json
    assert.equal(shown.local_delivery.status, 201)
    assert.equal(shown.local_delivery.body_preview, 'created')
  })
})
