// Forwarding controls: pause (captures still stored, nothing sent) and resume (held requests go out
// in capture order), and bulk recovery of dead-lettered forwards since a time (a job, progress
// readable, asking twice is the same recovery).
import assert from 'node:assert/strict'
import { startSystem, type TestSystem } from './helpers/system.ts'
import { get, post } from './helpers/http.ts'
import { api, capture, createEndpoint, signup, startTarget, waitFor, type Target } from './helpers/webhooks.ts'

describe('webhooks: pause/resume forwarding and bulk recovery', () => {
  let sys: TestSystem
  const targets: Target[] = []
  before(async () => {
    sys = await startSystem({ services: ['webhooks'], env: { WEBHOOK_FORWARD_SCHEDULE_MS: '0,100', WEBHOOK_FORWARD_TIMEOUT_MS: '3000' } })
  })
  after(async () => {
    await Promise.all(targets.map((t) => t.close()))
    await sys?.stop()
  })
  const list = async (key: string, token: string) => (await get(api(sys, `/endpoints/${token}/requests?limit=100`), { key })).json.requests

  it('pause holds forwards while captures keep being stored; resume sends the held ones in order', async () => {
    const t = await startTarget()
    targets.push(t)
    const key = await signup(sys, 'starter')
    const ep = await createEndpoint(sys, key, { forward_url: t.url })
    const paused = await post(api(sys, `/endpoints/${ep.endpoint_id}/forwarding/pause`), undefined, { key })
    assert.equal(paused.status, 200)
    assert.deepEqual(paused.json, { endpoint_id: ep.endpoint_id, forward_paused: true })
    assert.equal((await get(api(sys, `/endpoints/${ep.endpoint_id}`), { key })).json.forward_paused, true)
    for (let i = 1; i <= 6; i++) assert.equal((await capture(ep.url, { body: `n${i}` })).status, 200)
    const held = await waitFor(async () => {
      const rs = await list(key, ep.endpoint_id)
      return rs.length === 6 && rs.every((r: any) => r.forward.status === 'paused') && rs
    }, 15_000, 'six held captures')
    assert.equal(held.length, 6)
    assert.equal(t.received.length, 0, 'nothing sent while paused')
    assert.deepEqual((await get(api(sys, `/endpoints/${ep.endpoint_id}/requests?forward_status=paused`), { key })).json.requests.length, 6)

    assert.equal((await post(api(sys, `/endpoints/${ep.endpoint_id}/forwarding/resume`), undefined, { key })).status, 200)
    await waitFor(() => t.received.length === 6, 15_000, 'the held forwards')
    assert.deepEqual(t.received.map((r) => r.body.toString()), ['n1', 'n2', 'n3', 'n4', 'n5', 'n6'], 'in capture order')
    await waitFor(async () => (await list(key, ep.endpoint_id)).every((r: any) => r.forward.status === 'delivered'), 10_000, 'delivered')
  })

  it('refuses pause on free plans (403), without forward_url (409), of another tenant (404)', async () => {
    const free = await signup(sys)
    const fep = await createEndpoint(sys, free)
    assert.equal((await post(api(sys, `/endpoints/${fep.endpoint_id}/forwarding/pause`), undefined, { key: free })).status, 403)
    const paid = await signup(sys, 'starter')
    const plain = await createEndpoint(sys, paid)
    assert.equal((await post(api(sys, `/endpoints/${plain.endpoint_id}/forwarding/pause`), undefined, { key: paid })).status, 409)
    assert.equal((await post(api(sys, `/endpoints/${fep.endpoint_id}/forwarding/pause`), undefined, { key: paid })).status, 404)
  })

  it('re-sends every dead-lettered forward since a time in one call: a job with readable progress, idempotent', async () => {
    let healthy = false
    const t = await startTarget((_r, _i, res) => {
      res.statusCode = healthy ? 200 : 500
      res.end()
    })
    targets.push(t)
    const key = await signup(sys, 'starter')
    const ep = await createEndpoint(sys, key, { forward_url: t.url })
    for (let i = 1; i <= 3; i++) await capture(ep.url, { body: `d${i}` })
    await waitFor(async () => (await list(key, ep.endpoint_id)).every((r: any) => r.forward?.status === 'dead'), 20_000, 'three dead letters')
    const failedSends = t.received.length
    healthy = true

    const url = api(sys, `/endpoints/${ep.endpoint_id}/recoveries`)
    const bad = await post(url, { since: 'last week' }, { key })
    assert.equal(bad.status, 400)
    assert.match(bad.json.error, /^since must be an ISO 8601 time/)
    assert.equal((await post(url, {}, { key })).status, 400)
    const since = new Date(Date.now() - 3_600_000).toISOString()
    const started = await post(url, { since }, { key })
    assert.equal(started.status, 202)
    assert.match(started.json.recovery_id, /^rec_/)
    const again = await post(url, { since }, { key })
    assert.equal(again.status, 200, 'asking twice is the same recovery')
    assert.equal(again.json.recovery_id, started.json.recovery_id)
    const done = await waitFor(async () => {
      const r = (await get(`${sys.root.webhooks}${started.json.status_url}`, { key })).json
      return r.status === 'done' && r
    }, 15_000, 'the recovery to finish')
    assert.equal(done.total, 3)
    assert.equal(done.resent, 3)
    await waitFor(async () => (await list(key, ep.endpoint_id)).every((r: any) => r.forward.status === 'delivered'), 15_000, 'all delivered')
    assert.equal(t.received.length - failedSends, 3, 'each dead letter re-sent exactly once')
    const other = await signup(sys, 'starter')
    assert.equal((await get(`${sys.root.webhooks}${started.json.status_url}`, { key: other })).status, 404)
  })
})
