import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { hostname } from 'node:os'
import { startSystem, type TestSystem } from './helpers/system.ts'
import { get, post } from './helpers/http.ts'
import { deliveryId } from '../src/webhooks/forward/forward.ts'
import { api, capture, createEndpoint, signup, startTarget, waitFor, type Target } from './helpers/webhooks.ts'

describe('webhooks: forwarding and replay', () => {
  let sys: TestSystem
  const targets: Target[] = []
  before(async () => {
    sys = await startSystem({ services: ['webhooks'], env: { WEBHOOK_FORWARD_SCHEDULE_MS: '0,300,300', WEBHOOK_FORWARD_TIMEOUT_MS: '3000' } })
  })
  after(async () => {
    await Promise.all(targets.map((t) => t.close()))
    await sys?.stop()
  })
  const target = async (...a: Parameters<typeof startTarget>) => {
    const t = await startTarget(...a)
    targets.push(t)
    return t
  }
  const request = async (key: string, token: string, id: number) => (await get(api(sys, `/endpoints/${token}/requests/${id}`), { key })).json

  it('forwards every capture: method, sub-path, query, headers and exact bytes; 500 then 200 → two attempts, delivered once', async () => {
    const t = await target((_r, i, res) => {
      res.statusCode = i === 0 ? 500 : 200
      res.end(i === 0 ? 'boom' : 'thanks')
    })
    const key = await signup(sys, 'starter')
    const ep = await createEndpoint(sys, key, { forward_url: `${t.url}/base?k=v` })
    const body = randomBytes(2048)
    const r = await capture(`${ep.url}/deep/path?a=1`, { method: 'PATCH', body, headers: { 'x-signature': 'abc', 'content-type': 'application/octet-stream' } })
    assert.equal(r.status, 200)
    const done = await waitFor(async () => {
      const x = await request(key, ep.endpoint_id, 1)
      return x.forward?.status === 'delivered' && x
    }, 20_000, 'delivery')
    assert.equal(t.received.length, 2)
    for (const got of t.received) {
      assert.equal(got.method, 'PATCH')
      assert.equal(got.url, '/base/deep/path?k=v&a=1')
      assert.equal(got.headers['x-signature'], 'abc')
      assert.equal(got.headers['content-type'], 'application/octet-stream')
      assert.equal(got.headers.host, new URL(t.url).host)
      assert.equal(got.headers['queueworks-delivery-id'], deliveryId(ep.endpoint_id, 1), 'the same delivery id on every attempt')
      assert.ok(got.body.equals(body))
    }
    assert.equal(done.forward.attempts, 2)
    assert.deepEqual(done.forward_attempts.map((a: any) => [a.attempt, a.status, a.ok]), [[1, 500, false], [2, 200, true]])
    assert.match(done.forward_attempts[0].error, /500/)
    assert.equal(typeof done.forward_attempts[1].latency_ms, 'number')
    assert.match(done.forward.delivered_at, /^\d{4}-\d\d-\d\dT[\d:.]+$/)
    await new Promise((r) => setTimeout(r, 800))
    assert.equal(t.received.length, 2, 'nothing is sent after the delivery')
  })

  it('dead-letters after the last attempt; the manual retry delivers it; retry is refused while in progress', async () => {
    let up = false
    const t = await target((_r, _i, res) => {
      res.statusCode = up ? 204 : 503
      res.end()
    })
    const key = await signup(sys, 'pro')
    const ep = await createEndpoint(sys, key, { forward_url: t.url })
    await capture(ep.url, { body: '{"event":"x"}', headers: { 'content-type': 'application/json' } })
    const dead = await waitFor(async () => {
      const x = await request(key, ep.endpoint_id, 1)
      return x.forward?.status === 'dead' && x
    }, 20_000, 'dead letter')
    assert.equal(dead.forward_attempts.length, 3)
    assert.ok(dead.forward_attempts.every((a: any) => a.status === 503 && !a.ok))
    assert.equal(t.received.length, 3)

    up = true
    const retry = await post(api(sys, `/endpoints/${ep.endpoint_id}/requests/1/retry`), {}, { key })
    assert.equal(retry.status, 202)
    const again = await post(api(sys, `/endpoints/${ep.endpoint_id}/requests/1/retry`), {}, { key })
    assert.ok([202, 409].includes(again.status)) // 409 while the first retry is in progress
    const ok = await waitFor(async () => {
      const x = await request(key, ep.endpoint_id, 1)
      return x.forward?.status === 'delivered' && x
    }, 20_000, 'manual retry')
    assert.equal(ok.forward_attempts.at(-1).status, 204)
    assert.ok(ok.forward_attempts.length >= 4)
  })

  it('retry: 409 for a request that has no forward, 403 on the free plan', async () => {
    const key = await signup(sys, 'starter')
    const ep = await createEndpoint(sys, key)
    await capture(ep.url)
    const r = await post(api(sys, `/endpoints/${ep.endpoint_id}/requests/1/retry`), {}, { key })
    assert.equal(r.status, 409)
    const free = await signup(sys)
    const fep = await createEndpoint(sys, free)
    await capture(fep.url)
    const f = await post(api(sys, `/endpoints/${fep.endpoint_id}/requests/1/retry`), {}, { key: free })
    assert.equal(f.status, 403)
    assert.match(f.json.error, /free plan/)
  })

  it('replays a binary body byte-identical and returns the target answer', async () => {
    const t = await target((_r, _i, res) => {
      res.statusCode = 202
      res.setHeader('x-target', 'yes')
      res.end(Buffer.from([0xff, 0x00, 0xfe]))
    })
    const key = await signup(sys, 'starter')
    const ep = await createEndpoint(sys, key)
    const body = randomBytes(10_000)
    await capture(`${ep.url}/x?y=1`, { method: 'PUT', body, headers: { 'x-original': '1' } })
    const r = await post(api(sys, `/endpoints/${ep.endpoint_id}/requests/1/replay`), { url: `${t.url}/replayed` }, { key })
    assert.equal(r.status, 200, r.text)
    assert.equal(r.json.status, 202)
    assert.equal(r.json.headers['x-target'], 'yes')
    assert.equal(r.json.body_encoding, 'base64')
    assert.ok(Buffer.from(r.json.body, 'base64').equals(Buffer.from([0xff, 0x00, 0xfe])))
    assert.equal(t.received.length, 1)
    assert.equal(t.received[0]!.method, 'PUT')
    assert.equal(t.received[0]!.url, '/replayed')
    assert.equal(t.received[0]!.headers['x-original'], '1')
    assert.ok(t.received[0]!.body.equals(body))
  })

  it('replay errors: unreachable → 502, free plan → 403, bad url → 400, unknown request → 404', async () => {
    const closed = await startTarget()
    const deadUrl = closed.url
    await closed.close()
    const key = await signup(sys, 'starter')
    const ep = await createEndpoint(sys, key)
    await capture(ep.url, { body: 'x' })
    const unreachable = await post(api(sys, `/endpoints/${ep.endpoint_id}/requests/1/replay`), { url: deadUrl }, { key })
    assert.equal(unreachable.status, 502)
    assert.match(unreachable.json.error, /^Replay target unreachable/)
    for (const [body, re] of [[{}, /url is required/], [{ url: 'gopher://x' }, /^url must use http/], [{ url: 5 }, /url must be a string/]] as const) {
      const r = await post(api(sys, `/endpoints/${ep.endpoint_id}/requests/1/replay`), body, { key })
      assert.equal(r.status, 400, JSON.stringify(body))
      assert.match(r.json.error, re)
    }
    assert.equal((await post(api(sys, `/endpoints/${ep.endpoint_id}/requests/42/replay`), { url: deadUrl }, { key })).status, 404)
    const free = await signup(sys)
    const fep = await createEndpoint(sys, free)
    await capture(fep.url)
    const f = await post(api(sys, `/endpoints/${fep.endpoint_id}/requests/1/replay`), { url: deadUrl }, { key: free })
    assert.equal(f.status, 403)
    assert.match(f.json.error, /^Replay is not available on the free plan/)
  })

  describe('SSRF guard (OUTBOUND_ALLOW_PRIVATE=false)', () => {
    let strict: TestSystem
    before(async () => {
      strict = await startSystem({ services: ['webhooks'], env: { OUTBOUND_ALLOW_PRIVATE: 'false' } })
    })
    after(async () => strict?.stop())

    it('refuses private forward and replay targets, including names that resolve to loopback', async () => {
      const t = await target()
      const key = await signup(strict, 'starter')
      for (const url of ['http://127.0.0.1:9/', 'http://[::1]/', 'http://169.254.169.254/latest', 'http://localhost/', 'http://10.0.0.1/']) {
        const r = await post(`${strict.url.webhooks}/api/v1/endpoints`, { forward_url: url }, { key })
        assert.equal(r.status, 400, url)
        assert.match(r.json.error, /forward_url must point to a public address/)
      }
      const ep = await createEndpoint(strict, key)
      await capture(ep.url, { body: 'x' })
      const port = new URL(t.url).port
      const lit = await post(`${strict.url.webhooks}/api/v1/endpoints/${ep.endpoint_id}/requests/1/replay`, { url: `http://127.0.0.1:${port}/` }, { key })
      assert.equal(lit.status, 400)
      // The machine's own name passes the shape check but resolves to a loopback/private address:
      // refused after DNS resolution, in the job.
      const named = await post(`${strict.url.webhooks}/api/v1/endpoints/${ep.endpoint_id}/requests/1/replay`, { url: `http://${hostname()}:${port}/` }, { key })
      assert.equal(named.status, 400, named.text)
      assert.match(named.json.error, /^url is not allowed/)
      assert.equal(t.received.length, 0)
    })
  })
})
