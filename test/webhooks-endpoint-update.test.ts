// PATCH /api/v1/endpoints/{token}: an endpoint's settings change while its capture URL stays.
// The next capture is answered with the new response, forwards (owed ones included) go to the new
// target, removing the target dead-letters what is owed with a reason, input is checked exactly as
// create checks it, and a second API replica on the same database sees the change at once.
import assert from 'node:assert/strict'
import { startSystem, type TestSystem } from './helpers/system.ts'
import { assertJsonError, call, get, post } from './helpers/http.ts'
import { endpoints } from '../src/webhooks/store/endpoint-store.ts'
import { api, capture, createEndpoint, signup, startTarget, waitFor, type Target } from './helpers/webhooks.ts'

const patch = (sys: TestSystem, token: string, body: unknown, key: string) => call('PATCH', api(sys, `/endpoints/${token}`), { json: body, key })
const ALL_FIELDS = 'body must name at least one of: name, response_code, response_body, response_content_type, forward_url'

describe('webhooks: changing an endpoint (PATCH /endpoints/{token})', () => {
  let sys: TestSystem
  const targets: Target[] = []
  before(async () => {
    // Attempts 1.5 s apart: a failing forward is still retrying when the test changes its target.
    sys = await startSystem({ services: ['webhooks'], env: { WEBHOOK_FORWARD_SCHEDULE_MS: '0,1500,1500,1500,1500,1500', WEBHOOK_FORWARD_TIMEOUT_MS: '3000' } })
  })
  after(async () => {
    await Promise.all(targets.map((t) => t.close()))
    await sys?.stop()
  })
  const target = async (status = 200) => {
    const t = await startTarget((_r, _i, res) => {
      res.statusCode = status
      res.end(status === 200 ? 'ok' : 'down')
    })
    targets.push(t)
    return t
  }
  const request = async (key: string, token: string, id: number) => (await get(api(sys, `/endpoints/${token}/requests/${id}`), { key })).json
  const delivered = (key: string, token: string, id: number) =>
    waitFor(async () => {
      const x = await request(key, token, id)
      return x.forward?.status === 'delivered' && x
    }, 20_000, `delivery of #${id}`)

  it('changes each field alone, answers as GET does, keeps the capture URL and the others', async () => {
    const key = await signup(sys, 'starter')
    const t = await target()
    const ep = await createEndpoint(sys, key, { name: 'before' })
    const changes: Record<string, unknown>[] = [
      { name: '  Ünïcødé 🚀 hooks  ' },
      { response_code: 202 },
      { response_body: '<ok/>' },
      { response_content_type: 'application/xml' },
      { forward_url: `${t.url}/in` },
      { name: null },
      { forward_url: null },
    ]
    const expected: Record<string, unknown> = { name: 'before', response_code: 200, response_body: '{"ok":true}', response_content_type: 'application/json', forward_url: null }
    for (const change of changes) {
      const r = await patch(sys, ep.endpoint_id, change, key)
      assert.equal(r.status, 200, r.text)
      const [field, value] = Object.entries(change)[0]!
      expected[field] = typeof value === 'string' && field === 'name' ? value.trim() : value
      for (const [f, v] of Object.entries(expected)) assert.deepEqual(r.json[f], v, `${f} after ${JSON.stringify(change)}`)
      assert.equal(r.json.url, ep.url, 'the capture URL is the same')
      const read = await get(api(sys, `/endpoints/${ep.endpoint_id}`), { key })
      assert.deepEqual(r.json, read.json, 'the answer is the endpoint as GET answers it')
    }
    const all = await patch(sys, ep.endpoint_id, { name: 'all', response_code: 201, response_body: 'b', response_content_type: 'text/plain', forward_url: `${t.url}/x` }, key)
    assert.equal(all.status, 200)
    assert.deepEqual([all.json.name, all.json.response_code, all.json.response_body, all.json.response_content_type, all.json.forward_url], ['all', 201, 'b', 'text/plain', `${t.url}/x`])
    assert.deepEqual(all.json.forward_schedule_ms, [0, 1500, 1500, 1500, 1500, 1500])
  })

  it('the next capture is answered with the new response (GET and HEAD alike)', async () => {
    const key = await signup(sys)
    const ep = await createEndpoint(sys, key)
    const first = await capture(ep.url, { body: 'a' })
    assert.equal(first.status, 200)
    assert.equal(first.text, '{"ok":true}')
    const r = await patch(sys, ep.endpoint_id, { response_code: 418, response_body: 'short and stout', response_content_type: 'text/plain; charset=utf-8' }, key)
    assert.equal(r.status, 200, r.text)
    const next = await capture(ep.url, { body: 'b' })
    assert.equal(next.status, 418)
    assert.equal(next.text, 'short and stout')
    assert.equal(next.headers.get('content-type'), 'text/plain; charset=utf-8')
    const head = await call('HEAD', ep.url)
    assert.equal(head.status, 418)
    const none = await patch(sys, ep.endpoint_id, { response_code: 204 }, key)
    assert.equal(none.status, 200)
    assert.equal((await capture(ep.url, { body: 'c' })).status, 204)
  })

  it('forwards after the change go to the new target and never to the old one', async () => {
    const key = await signup(sys, 'pro')
    const [a, b] = [await target(), await target()]
    const ep = await createEndpoint(sys, key, { forward_url: `${a.url}/old` })
    await capture(ep.url, { body: 'one' })
    await delivered(key, ep.endpoint_id, 1)
    assert.equal(a.received.length, 1)
    const r = await patch(sys, ep.endpoint_id, { forward_url: `${b.url}/new` }, key)
    assert.equal(r.status, 200, r.text)
    await capture(`${ep.url}/sub?q=1`, { body: 'two' })
    const two = await delivered(key, ep.endpoint_id, 2)
    assert.equal(b.received.length, 1)
    assert.equal(b.received[0]!.url, '/new/sub?q=1')
    assert.equal(b.received[0]!.body.toString(), 'two')
    assert.equal(a.received.length, 1, 'the old target got nothing after the change')
    assert.equal(two.forward_attempts[0].url, `${b.url}/new/sub?q=1`, 'the attempt records where it was sent')
  })

  it('a forward still retrying when the target changes makes its next attempts to the new target; each attempt records its URL', async () => {
    const key = await signup(sys, 'starter')
    const down = await target(503)
    const up = await target()
    const ep = await createEndpoint(sys, key, { forward_url: down.url })
    await capture(ep.url, { body: 'owed' })
    await waitFor(async () => (await request(key, ep.endpoint_id, 1)).forward?.attempts >= 1, 20_000, 'the first failed attempt')
    const r = await patch(sys, ep.endpoint_id, { forward_url: `${up.url}/fixed` }, key)
    assert.equal(r.status, 200)
    const done = await delivered(key, ep.endpoint_id, 1)
    assert.equal(up.received.length, 1)
    assert.equal(up.received[0]!.body.toString(), 'owed')
    const tries = done.forward_attempts as { url: string; ok: boolean; status: number }[]
    assert.ok(tries.length >= 2)
    assert.deepEqual(tries.at(-1), { ...tries.at(-1), url: `${up.url}/fixed`, ok: true, status: 200 })
    assert.ok(tries.slice(0, -1).every((t) => t.url === `${down.url}/` && t.status === 503 && !t.ok), JSON.stringify(tries))
    const deliveries = await get(api(sys, `/endpoints/${ep.endpoint_id}/deliveries`), { key })
    assert.deepEqual(deliveries.json.deliveries[0].attempts.map((a: { url: string }) => a.url), tries.map((t) => t.url))
  })

  it('forward_url null stops forwarding: owed forwards are dead-lettered at once with the reason, never sent, and can be sent again later', async () => {
    const key = await signup(sys, 'starter')
    const down = await target(503)
    const ep = await createEndpoint(sys, key, { forward_url: down.url })
    await capture(ep.url, { body: 'held' })
    await waitFor(async () => (await request(key, ep.endpoint_id, 1)).forward?.status === 'retrying', 20_000, 'retrying')
    const r = await patch(sys, ep.endpoint_id, { forward_url: null }, key)
    assert.equal(r.status, 200, r.text)
    assert.equal(r.json.forward_url, null)
    assert.equal(r.json.forward_schedule_ms, null)
    const owed = await request(key, ep.endpoint_id, 1)
    assert.equal(owed.forward.status, 'dead')
    assert.match(owed.forward.last_error, /forwarding was turned off for this endpoint \(forward_url removed\)/)
    assert.equal(owed.forward.next_attempt_at, null)
    // Its attempt still queued in Redis finds it dead and sends nothing.
    const forwards = sys.platform.queues.queue('capture-forward')
    await waitFor(async () => {
      const c = await forwards.getJobCounts('active', 'wait', 'delayed', 'prioritized')
      return Object.values(c).every((n) => n === 0)
    }, 20_000, 'the queued attempt to run')
    const sent = down.received.length
    const still = await request(key, ep.endpoint_id, 1)
    assert.equal(still.forward.status, 'dead')
    assert.equal(still.forward_attempts.length, sent, 'no attempt was made after the change')
    // Later captures are not forwarded at all.
    await capture(ep.url, { body: 'after' })
    assert.equal((await request(key, ep.endpoint_id, 2)).forward, undefined)
    // A new target and a retry deliver the dead-lettered one: nothing was lost.
    const up = await target()
    assert.equal((await patch(sys, ep.endpoint_id, { forward_url: up.url }, key)).status, 200)
    const retry = await post(api(sys, `/endpoints/${ep.endpoint_id}/requests/1/retry`), {}, { key })
    assert.equal(retry.status, 202, retry.text)
    await delivered(key, ep.endpoint_id, 1)
    assert.equal(up.received[0]!.body.toString(), 'held')
    assert.equal(down.received.length, sent)
  })

  it('an attempt that finds the forward_url gone (a capture racing the change) is dead-lettered at once with the reason, not retried', async () => {
    const key = await signup(sys, 'starter')
    const down = await target(503)
    const ep = await createEndpoint(sys, key, { forward_url: down.url })
    await capture(ep.url, { body: 'racing' })
    await waitFor(async () => (await request(key, ep.endpoint_id, 1)).forward?.status === 'retrying', 20_000, 'retrying')
    // As if the capture had read the endpoint just before the change: the target goes, no sweep runs.
    await endpoints(sys.platform.db).updateOne({ _id: ep.endpoint_id }, { $set: { forward_url: null } })
    const dead = await waitFor(async () => {
      const x = await request(key, ep.endpoint_id, 1)
      return x.forward.status === 'dead' && x
    }, 20_000, 'the dead letter')
    assert.equal(dead.forward_attempts.length, 2, 'one attempt to the target, then the refusal: no further retries')
    assert.match(dead.forward_attempts[1].error, /forwarding was turned off/)
    assert.equal(down.received.length, 1)
    assert.equal((await get(api(sys, `/endpoints/${ep.endpoint_id}`), { key })).json.forward_health, null)
  })

  it('the plan rules of create: a forward_url needs a paid plan, removing one does not', async () => {
    const key = await signup(sys)
    const ep = await createEndpoint(sys, key)
    const r = await patch(sys, ep.endpoint_id, { forward_url: 'https://example.com/hook' }, key)
    assertJsonError(r, 403, /^Forwarding \(forward_url\) is not available on the free plan/)
    const created = await post(api(sys, '/endpoints'), { forward_url: 'https://example.com/hook' }, { key })
    assert.equal(r.json.error, created.json.error)
    assert.equal((await patch(sys, ep.endpoint_id, { forward_url: null }, key)).status, 200)
    assert.equal((await get(api(sys, `/endpoints/${ep.endpoint_id}`), { key })).json.forward_url, null)
  })

  it('refuses bad input with the messages of create and changes nothing', async () => {
    const key = await signup(sys, 'starter')
    const ep = await createEndpoint(sys, key, { name: 'keep', forward_url: 'https://example.com/keep' })
    const before = (await get(api(sys, `/endpoints/${ep.endpoint_id}`), { key })).json
    const cases: [unknown, string | RegExp][] = [
      [{ response_code: '201' }, 'response_code must be a number'],
      [{ response_code: 201.5 }, 'response_code must be an integer'],
      [{ response_code: 199 }, 'response_code must be >= 200'],
      [{ response_code: 600 }, 'response_code must be <= 599'],
      [{ response_code: null }, /^response_code must be/],
      [{ name: 7 }, 'name must be a string'],
      [{ name: 'n'.repeat(201) }, 'name must be at most 200 characters'],
      [{ response_body: 'x'.repeat(65_537) }, 'response_body must be at most 65536 characters'],
      [{ response_body: null }, /^response_body must be/],
      [{ response_content_type: '' }, 'response_content_type must not be empty'],
      [{ response_content_type: 'text/plain\r\nX-Evil: 1' }, 'response_content_type must be printable ASCII (it is sent as a header)'],
      [{ response_content_type: 'c'.repeat(256) }, 'response_content_type must be at most 255 characters'],
      [{ forward_url: 'ftp://example.com/' }, /^forward_url /],
      [{ forward_url: 'not a url' }, /^forward_url /],
      [{ forward_url: `https://example.com/${'p'.repeat(2_050)}` }, 'forward_url must be at most 2048 characters'],
      [{ forward_url: ['https://example.com'] }, 'forward_url must be a string'],
      [{ bogus: 1 }, 'body has unknown field: bogus'],
      [{ name: 'x', endpoint_id: 'other', seq: 0 }, 'body has unknown fields: endpoint_id, seq'],
    ]
    for (const [body, message] of cases) {
      const r = await patch(sys, ep.endpoint_id, body, key)
      assertJsonError(r, 400, message)
      // Exactly what create says about the same field.
      const c = await post(api(sys, '/endpoints'), body, { key })
      assert.equal(c.status, 400, JSON.stringify(body))
      assert.equal(c.json.error, r.json.error, JSON.stringify(body))
    }
    assertJsonError(await patch(sys, ep.endpoint_id, {}, key), 400, ALL_FIELDS)
    assertJsonError(await call('PATCH', api(sys, `/endpoints/${ep.endpoint_id}`), { key }), 400, ALL_FIELDS)
    assertJsonError(await call('PATCH', api(sys, `/endpoints/${ep.endpoint_id}`), { raw: '{"name": ', key }), 400)
    assertJsonError(await call('PATCH', api(sys, `/endpoints/${ep.endpoint_id}`), { raw: '[]', key }), 400)
    assertJsonError(await call('PATCH', api(sys, `/endpoints/${ep.endpoint_id}`), { raw: `{"name":"${'y'.repeat(3 << 20)}"}`, key }), 413)
    const after = (await get(api(sys, `/endpoints/${ep.endpoint_id}`), { key })).json
    assert.deepEqual(after, before, 'nothing changed')
  })

  it("another account's endpoint and an unknown token are not found; no key is 401", async () => {
    const mine = await signup(sys, 'starter')
    const theirs = await signup(sys, 'starter')
    const ep = await createEndpoint(sys, theirs, { name: 'theirs' })
    assertJsonError(await patch(sys, ep.endpoint_id, { name: 'mine now' }, mine), 404, 'Endpoint not found')
    assertJsonError(await patch(sys, 'doesnotexist0123', { name: 'x' }, mine), 404, 'Endpoint not found')
    assert.equal((await call('PATCH', api(sys, `/endpoints/${ep.endpoint_id}`), { json: { name: 'x' } })).status, 401)
    assert.equal((await get(api(sys, `/endpoints/${ep.endpoint_id}`), { key: theirs })).json.name, 'theirs')
  })

  it('is described in /openapi.json (so the OpenAPI fuzz test sends it hostile input)', async () => {
    const spec = (await get(`${sys.root.webhooks}/openapi.json`)).json
    const op = spec.paths['/api/v1/endpoints/{token}']?.patch
    assert.ok(op, 'PATCH /api/v1/endpoints/{token} is listed')
    assert.match(op.summary, /capture URL stays the same/)
    assert.deepEqual(Object.keys(op.requestBody.content['application/json'].schema.properties).sort(), ['forward_url', 'name', 'response_body', 'response_code', 'response_content_type'])
  })

  describe('a second API replica on the same database', () => {
    let other: TestSystem
    before(async () => {
      other = await startSystem({ services: ['webhooks'], workers: false, env: { MONGO_DB: sys.env.MONGO_DB!, QUEUE_PREFIX: sys.env.QUEUE_PREFIX! } })
    })
    after(async () => other?.stop())

    it('answers captures with the response and forwards to the target changed on the first, at once', async () => {
      const key = await signup(sys, 'business')
      const [a, b] = [await target(), await target()]
      const ep = await createEndpoint(sys, key, { forward_url: a.url })
      const otherUrl = ep.url.replace(sys.root.webhooks, other.root.webhooks)
      assert.equal((await capture(otherUrl, { body: 'x' })).status, 200)
      await delivered(key, ep.endpoint_id, 1)
      assert.equal((await patch(sys, ep.endpoint_id, { response_code: 201, response_body: 'changed', forward_url: b.url }, key)).status, 200)
      const r = await capture(otherUrl, { body: 'y' })
      assert.equal(r.status, 201)
      assert.equal(r.text, 'changed')
      const read = await get(`${other.url.webhooks}/api/v1/endpoints/${ep.endpoint_id}`, { key })
      assert.equal(read.json.forward_url, `${b.url}/`)
      await delivered(key, ep.endpoint_id, 2)
      assert.equal(b.received.length, 1)
      assert.equal(b.received[0]!.body.toString(), 'y')
      assert.equal(a.received.length, 1)
    })
  })

  describe('SSRF guard (OUTBOUND_ALLOW_PRIVATE=false)', () => {
    let strict: TestSystem
    before(async () => {
      strict = await startSystem({ services: ['webhooks'], workers: false, env: { OUTBOUND_ALLOW_PRIVATE: 'false' } })
    })
    after(async () => strict?.stop())

    it('refuses private and loopback targets as create does', async () => {
      const key = await signup(strict, 'starter')
      const ep = await createEndpoint(strict, key, { forward_url: 'https://example.com/hook' })
      for (const url of ['http://127.0.0.1:9/', 'http://[::1]/', 'http://169.254.169.254/latest', 'http://localhost/', 'http://10.0.0.1/']) {
        const r = await patch(strict, ep.endpoint_id, { forward_url: url }, key)
        assertJsonError(r, 400, /^forward_url must point to a public address/)
      }
      assert.equal((await get(api(strict, `/endpoints/${ep.endpoint_id}`), { key })).json.forward_url, 'https://example.com/hook')
    })
  })
})
