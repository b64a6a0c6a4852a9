// The endpoints overview (captures today, last request, the forward target's health and dead
// letters, read from counters), the deliveries listing, and key rotation, on a real system with
// real local targets.
import assert from 'node:assert/strict'
import { startSystem, type TestSystem } from './helpers/system.ts'
import { call, get, post } from './helpers/http.ts'
import { api, capture, createEndpoint, signup, startTarget, waitFor, type Target } from './helpers/webhooks.ts'
import { clock, dayKey } from '../src/platform/clock.ts'
import { findAccountByKey } from '../src/platform/accounts.ts'
import { endpoints } from '../src/webhooks/store/endpoint-store.ts'
import { expireCaptures } from '../src/webhooks/store/expire.ts'
import { FORWARD_WINDOW } from '../src/webhooks/store/forward-stats.ts'

describe('webhooks: endpoints overview, deliveries and key rotation', function () {
  this.timeout(120_000)
  let sys: TestSystem
  const targets: Target[] = []
  before(async () => {
    sys = await startSystem({ services: ['webhooks'], env: { WEBHOOK_FORWARD_SCHEDULE_MS: '0,50', WEBHOOK_FORWARD_TIMEOUT_MS: '3000' } })
  })
  after(async () => {
    await Promise.all(targets.map((t) => t.close()))
    await sys?.stop()
  })
  const target = async (reply?: Parameters<typeof startTarget>[0]) => {
    const t = await startTarget(reply)
    targets.push(t)
    return t
  }
  const overview = async (key: string, token: string) => {
    const r = await get(api(sys, `/endpoints/${token}`), { key })
    assert.equal(r.status, 200, r.text)
    return r.json
  }
  const deliveries = async (key: string, token: string, q = '') => {
    const r = await get(api(sys, `/endpoints/${token}/deliveries?limit=100${q}`), { key })
    assert.equal(r.status, 200, r.text)
    return r.json.deliveries as any[]
  }

  it('counts captures today and notes the last request; a refused capture is not counted', async () => {
    const key = await signup(sys)
    const ep = await createEndpoint(sys, key)
    const fresh = await overview(key, ep.endpoint_id)
    assert.deepEqual([fresh.captures_today, fresh.last_request_at, fresh.forward_health], [0, null, null])
    const before = clock.now()
    for (let i = 0; i < 3; i++) assert.equal((await capture(ep.url, { body: `c${i}` })).status, 200)
    assert.equal((await capture(ep.url, { method: 'HEAD' })).status, 200)
    const o = await overview(key, ep.endpoint_id)
    assert.equal(o.captures_today, 3)
    assert.equal(o.request_count, 3)
    assert.ok(new Date(o.last_request_at + 'Z') >= new Date(before.getTime() - 1000), o.last_request_at)
    // The daily limit used up (the account's counter set directly): refused, and not counted.
    const acc = await findAccountByKey(sys.platform.db, 'webhooks', key)
    await sys.platform.db.collection('webhook_counters').updateOne({ _id: `day:${acc!._id}:${dayKey(clock.now())}` } as any, { $set: { count: 100 } })
    assert.equal((await capture(ep.url, { body: 'over' })).status, 429)
    assert.equal((await overview(key, ep.endpoint_id)).captures_today, 3)
    // The list carries the same fields.
    const list = await get(api(sys, '/endpoints'), { key })
    assert.equal(list.json.endpoints[0].captures_today, 3)
    assert.equal(list.json.endpoints[0].forward_health, null)
  })

  it("reports the forward target's health and dead letters, in step with the deliveries listing", async () => {
    let healthy = true
    const t = await target((_r, _i, res) => {
      res.statusCode = healthy ? 200 : 503
      res.end()
    })
    const key = await signup(sys, 'starter')
    const ep = await createEndpoint(sys, key, { forward_url: t.url })
    for (let i = 0; i < 3; i++) await capture(ep.url, { body: `ok${i}` })
    await waitFor(async () => (await deliveries(key, ep.endpoint_id, '&status=delivered')).length === 3, 20_000, 'three delivered')
    healthy = false
    for (let i = 0; i < 2; i++) await capture(ep.url, { body: `bad${i}` })
    await waitFor(async () => (await deliveries(key, ep.endpoint_id, '&status=dead')).length === 2, 20_000, 'two dead letters')

    const all = await deliveries(key, ep.endpoint_id)
    assert.deepEqual(all.map((d) => d.id), [5, 4, 3, 2, 1])
    const attempts = all.flatMap((d) => d.attempts)
    const h = (await overview(key, ep.endpoint_id)).forward_health
    assert.equal(h.window, FORWARD_WINDOW)
    assert.equal(h.attempts, attempts.length)
    assert.equal(h.succeeded, attempts.filter((a) => a.ok).length)
    assert.equal(h.succeeded, 3)
    assert.equal(h.success_rate, 3 / attempts.length)
    assert.equal(h.dead_lettered, 2)
    assert.deepEqual({ ...h.last_error, at: undefined }, { message: 'target answered 503', status: 503, at: undefined })
    assert.ok(h.last_success_at < h.last_error.at)
    assert.equal(h.last_attempt_at, h.last_error.at)
    // A delivery: its forward state and every attempt, no body.
    const dead = all[0]
    assert.equal(dead.forward.status, 'dead')
    assert.equal(dead.body, undefined)
    assert.equal(dead.method, 'POST')
    assert.ok(dead.attempts.length >= 2)
    for (const a of dead.attempts) {
      assert.equal(a.status, 503)
      assert.equal(a.ok, false)
      assert.equal(typeof a.latency_ms, 'number')
    }
    assert.deepEqual((await deliveries(key, ep.endpoint_id, '&status=failed')).map((d) => d.id), [5, 4])

    // Out of the dead letter: a retry by hand, then deleting the other one.
    healthy = true
    assert.equal((await post(api(sys, `/endpoints/${ep.endpoint_id}/requests/5/retry`), undefined, { key })).status, 202)
    await waitFor(async () => (await deliveries(key, ep.endpoint_id, '&status=delivered')).length === 4, 20_000, 'the retried one delivered')
    let o = (await overview(key, ep.endpoint_id)).forward_health
    assert.equal(o.dead_lettered, 1)
    assert.equal(o.succeeded, 4)
    assert.equal((await call('DELETE', api(sys, `/endpoints/${ep.endpoint_id}/requests/4`), { key })).status, 200)
    o = (await overview(key, ep.endpoint_id)).forward_health
    assert.equal(o.dead_lettered, 0)
    const listed = (await get(api(sys, '/endpoints'), { key })).json.endpoints[0]
    assert.deepEqual(listed.forward_health, o)
    assert.equal(listed.captures_today, 5)
  })

  it('counts a bulk recovery out of the dead letter, and takes the rate over the last attempts only', async () => {
    let healthy = false
    const t = await target((_r, _i, res) => {
      res.statusCode = healthy ? 204 : 500
      res.end()
    })
    const key = await signup(sys, 'starter')
    const ep = await createEndpoint(sys, key, { forward_url: t.url })
    for (let i = 0; i < 3; i++) await capture(ep.url, { body: `d${i}` })
    await waitFor(async () => (await overview(key, ep.endpoint_id)).forward_health.dead_lettered === 3, 20_000, 'three dead letters')
    healthy = true
    const r = await post(api(sys, `/endpoints/${ep.endpoint_id}/recoveries`), { since: new Date(Date.now() - 3_600_000).toISOString() }, { key })
    assert.equal(r.status, 202, r.text)
    await waitFor(async () => (await deliveries(key, ep.endpoint_id, '&status=delivered')).length === 3, 20_000, 'recovered')
    assert.equal((await overview(key, ep.endpoint_id)).forward_health.dead_lettered, 0)
    for (let i = 0; i < FORWARD_WINDOW; i++) await capture(ep.url, { body: `n${i}` })
    await waitFor(async () => (await deliveries(key, ep.endpoint_id, '&status=delivered')).length === 3 + FORWARD_WINDOW, 60_000, 'all delivered')
    const h = (await overview(key, ep.endpoint_id)).forward_health
    assert.deepEqual([h.attempts, h.succeeded, h.success_rate], [FORWARD_WINDOW, FORWARD_WINDOW, 1])
    assert.equal(h.last_error.status, 500, 'the last error is kept after successes')
  })

  it('pages deliveries by request id and refuses bad input, other tenants and no key', async () => {
    const t = await target()
    const key = await signup(sys, 'starter')
    const ep = await createEndpoint(sys, key, { forward_url: t.url })
    for (let i = 0; i < 5; i++) await capture(ep.url, { body: `p${i}` })
    await waitFor(async () => (await deliveries(key, ep.endpoint_id, '&status=delivered')).length === 5, 20_000, 'delivered')
    const p1 = await get(api(sys, `/endpoints/${ep.endpoint_id}/deliveries?limit=2`), { key })
    assert.deepEqual([p1.json.deliveries.map((d: any) => d.id), p1.json.next_before], [[5, 4], 4])
    const p3 = await get(api(sys, `/endpoints/${ep.endpoint_id}/deliveries?limit=2&before=2`), { key })
    assert.deepEqual([p3.json.deliveries.map((d: any) => d.id), p3.json.next_before], [[1], null])
    const exact = await get(api(sys, `/endpoints/${ep.endpoint_id}/deliveries?limit=5`), { key })
    assert.equal(exact.json.next_before, null, 'no empty last page')
    for (const [q, msg] of [
      ['status=lost', /^status must be one of: pending, retrying, delivered, dead, paused, failed$/],
      ['limit=0', /^limit must be >= 1$/],
      ['limit=101', /^limit must be <= 100$/],
      ['before=x', /^before must be/],
    ] as const) {
      const r = await get(api(sys, `/endpoints/${ep.endpoint_id}/deliveries?${q}`), { key })
      assert.equal(r.status, 400, q)
      assert.match(r.json.error, msg)
    }
    const other = await signup(sys, 'starter')
    for (const path of [`/endpoints/${ep.endpoint_id}/deliveries`, `/endpoints/${ep.endpoint_id}`]) {
      const r = await get(api(sys, path), { key: other })
      assert.equal(r.status, 404, path)
      assert.equal(r.json.error, 'Endpoint not found')
    }
    assert.equal((await get(api(sys, `/endpoints/${ep.endpoint_id}/deliveries`))).status, 401)
    // An endpoint without forwarding has no deliveries.
    const plain = await createEndpoint(sys, key)
    await capture(plain.url, { body: 'x' })
    assert.deepEqual(await deliveries(key, plain.endpoint_id), [])
  })

  it('rotates the API key: the new one works, the old one is refused', async () => {
    const key = await signup(sys)
    const r = await post(api(sys, '/account/key/rotate'), undefined, { key })
    assert.equal(r.status, 200, r.text)
    assert.match(r.json.api_key, /^wv_[0-9A-Za-z]{40}$/)
    assert.equal((await get(api(sys, '/account'), { key })).status, 401)
    assert.equal((await get(api(sys, '/account'), { key: r.json.api_key })).status, 200)
    assert.equal((await call('POST', api(sys, '/account/key/rotate'))).status, 401)
  })

  it('retention drops capture counts of days before yesterday, keeping today', async () => {
    const key = await signup(sys)
    const ep = await createEndpoint(sys, key)
    await capture(ep.url, { body: 'x' })
    const now = clock.now()
    const old = dayKey(new Date(now.getTime() - 3 * 86_400_000))
    const yesterday = dayKey(new Date(now.getTime() - 86_400_000))
    await endpoints(sys.platform.db).updateOne({ _id: ep.endpoint_id }, { $set: { [`captures_by_day.${old}`]: 7, [`captures_by_day.${yesterday}`]: 4 } })
    await expireCaptures(sys.platform.db, now)
    const doc = await endpoints(sys.platform.db).findOne({ _id: ep.endpoint_id })
    assert.deepEqual(doc!.captures_by_day, { [yesterday]: 4, [dayKey(now)]: 1 })
  })

  it('documents the new routes and fields in /openapi.json', async () => {
    const doc = (await get(`${sys.root.webhooks}/openapi.json`)).json
    const d = doc.paths['/api/v1/endpoints/{token}/deliveries'].get
    assert.deepEqual(d.parameters.map((p: any) => p.name).sort(), ['before', 'limit', 'status', 'token'])
    assert.ok(doc.paths['/api/v1/account/key/rotate'].post)
  })
})
