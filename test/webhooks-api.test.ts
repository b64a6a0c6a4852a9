import assert from 'node:assert/strict'
import { startSystem, type TestSystem } from './helpers/system.ts'
import { call, get, post } from './helpers/http.ts'
import { clock } from '../src/platform/clock.ts'
import { findAccountByKey } from '../src/platform/accounts.ts'
import { captures } from '../src/webhooks/store/capture-store.ts'
import { api, capture, createEndpoint, signup } from './helpers/webhooks.ts'

describe('webhooks: management API', () => {
  let sys: TestSystem
  before(async () => {
    sys = await startSystem({ services: ['webhooks'], workers: false })
  })
  after(async () => {
    clock.reset()
    await sys?.stop()
  })

  describe('signup', () => {
    it('returns a wv_ key, the free plan, its limits and a reminder; the key is stored hashed', async () => {
      const r = await post(api(sys, '/signup'), { email: 'Dev@Example.com ' })
      assert.equal(r.status, 201)
      assert.match(r.json.api_key, /^wv_[0-9A-Za-z]{32,}$/)
      assert.equal(r.json.plan, 'free')
      assert.deepEqual(r.json.limits, { endpoints: 2, requests_per_day: 100, retention_hours: 24 })
      assert.match(r.json.message, /save/i)
      const raw = JSON.stringify(await sys.platform.db.collection('accounts').find({}).toArray())
      assert.ok(!raw.includes(r.json.api_key))
      assert.equal((await post(api(sys, '/signup'), { email: 'dev@example.com' })).status, 409)
    })

    it('bad input → 400 naming the field, never a 500', async () => {
      const cases: Array<[unknown, RegExp]> = [
        [{}, /email is required/],
        [{ email: 42 }, /email must be a string/],
        [{ email: 'nope' }, /email must be a valid/],
        [{ email: `${'a'.repeat(300)}@x.com` }, /at most 254/],
        [[], /body must be an object/],
      ]
      for (const [body, re] of cases) {
        const r = await post(api(sys, '/signup'), body)
        assert.equal(r.status, 400, JSON.stringify(body))
        assert.match(r.json.error, re)
      }
      const bad = await call('POST', api(sys, '/signup'), { raw: '{"email": ' })
      assert.equal(bad.status, 400)
      assert.equal(bad.json.error, 'Malformed JSON body')
      const empty = await call('POST', api(sys, '/signup'), { raw: '' })
      assert.equal(empty.status, 400)
      const form = await call('POST', api(sys, '/signup'), { raw: 'email=a@b.c', headers: { 'content-type': 'application/x-www-form-urlencoded' } })
      assert.equal(form.status, 415)
    })
  })

  describe('endpoints', () => {
    it('creates an endpoint with defaults, a capture URL, an inspect URL and a 7-day expiry (free)', async () => {
      const key = await signup(sys)
      const r = await post(api(sys, '/endpoints'), { name: 'Stripé test ✓' }, { key })
      assert.equal(r.status, 201)
      const ep = r.json
      assert.match(ep.endpoint_id, /^[0-9A-Za-z]{22}$/)
      assert.equal(ep.url, `${sys.url.webhooks}/hook/${ep.endpoint_id}`)
      assert.equal(ep.inspect_url, `${sys.url.webhooks}/inspect/${ep.endpoint_id}`)
      assert.equal(ep.name, 'Stripé test ✓')
      assert.equal(ep.response_code, 200)
      assert.equal(ep.response_body, '{"ok":true}')
      assert.equal(ep.response_content_type, 'application/json')
      assert.equal(ep.forward_url, null)
      assert.match(ep.expires_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}$/)
      const days = (Date.parse(`${ep.expires_at}Z`) - Date.parse(`${ep.created_at}Z`)) / 86_400_000
      assert.equal(days, 7)
    })

    it('lists endpoints with their request counts', async () => {
      const key = await signup(sys)
      const a = await createEndpoint(sys, key, { name: 'a' })
      const b = await createEndpoint(sys, key, { name: 'b' })
      for (let i = 0; i < 3; i++) await capture(a.url, { body: `${i}` })
      await capture(b.url)
      const r = await get(api(sys, '/endpoints'), { key })
      assert.equal(r.status, 200)
      assert.deepEqual(
        r.json.endpoints.map((e: any) => [e.name, e.request_count]),
        [['a', 3], ['b', 1]],
      )
      const one = await get(api(sys, `/endpoints/${a.endpoint_id}`), { key })
      assert.equal(one.json.request_count, 3)
    })

    it('validates the endpoint body', async () => {
      const key = await signup(sys)
      const cases: Array<[unknown, RegExp]> = [
        [{ response_code: 99 }, /response_code must be >= 200/],
        [{ response_code: 600 }, /response_code must be <= 599/],
        [{ response_code: 200.5 }, /response_code must be an integer/],
        [{ response_code: '200' }, /response_code must be a number/],
        [{ name: 'x'.repeat(201) }, /name must be at most 200/],
        [{ response_body: 'x'.repeat(65_537) }, /response_body must be at most 65536/],
        [{ response_content_type: 'text/plain\r\nX-Evil: 1' }, /printable ASCII/],
        [{ colour: 'red' }, /unknown field: colour/],
        ['"str"', /Malformed JSON body|body must be an object/],
      ]
      for (const [body, re] of cases) {
        const r = typeof body === 'string' ? await call('POST', api(sys, '/endpoints'), { raw: body, key }) : await post(api(sys, '/endpoints'), body, { key })
        assert.equal(r.status, 400, JSON.stringify(body))
        assert.match(r.json.error, re)
      }
      assert.equal((await get(api(sys, '/endpoints'), { key })).json.endpoints.length, 0)
    })

    it('needs a valid API key (401) and refuses keys of other services', async () => {
      assert.equal((await get(api(sys, '/endpoints'))).status, 401)
      assert.equal((await get(api(sys, '/endpoints'), { key: 'wv_nope' })).status, 401)
      assert.equal((await get(api(sys, '/endpoints'), { key: 'dm_' + 'a'.repeat(40) })).status, 401)
    })

    it('free plan: forward_url → 403 naming the plan; endpoint limit → 403; a deleted endpoint frees its slot', async () => {
      const key = await signup(sys)
      const fwd = await post(api(sys, '/endpoints'), { forward_url: 'https://example.com/in' }, { key })
      assert.equal(fwd.status, 403)
      assert.match(fwd.json.error, /free plan/)
      const a = await createEndpoint(sys, key)
      await createEndpoint(sys, key)
      const third = await post(api(sys, '/endpoints'), {}, { key })
      assert.equal(third.status, 403)
      assert.match(third.json.error, /Endpoint limit reached: the free plan allows 2 endpoints/)
      assert.equal((await call('DELETE', api(sys, `/endpoints/${a.endpoint_id}`), { key })).status, 200)
      assert.equal((await post(api(sys, '/endpoints'), {}, { key })).status, 201)
    })

    it('endpoint limit holds under concurrency: 10 parallel creates on free → exactly 2', async () => {
      const key = await signup(sys)
      const rs = await Promise.all(Array.from({ length: 10 }, () => post(api(sys, '/endpoints'), {}, { key })))
      assert.equal(rs.filter((r) => r.status === 201).length, 2)
      assert.equal(rs.filter((r) => r.status === 403).length, 8)
      assert.equal((await get(api(sys, '/endpoints'), { key })).json.endpoints.length, 2)
    })

    it('paid plan: forward_url accepted (and validated), no expiry', async () => {
      const key = await signup(sys, 'starter')
      const ok = await post(api(sys, '/endpoints'), { forward_url: 'https://example.com/in?x=1' }, { key })
      assert.equal(ok.status, 201)
      assert.equal(ok.json.forward_url, 'https://example.com/in?x=1')
      assert.equal(ok.json.expires_at, null)
      for (const bad of ['ftp://x.com', 'not a url', 'http://user:pw@x.com']) {
        const r = await post(api(sys, '/endpoints'), { forward_url: bad }, { key })
        assert.equal(r.status, 400, bad)
        assert.match(r.json.error, /^forward_url /)
      }
    })

    it('DELETE removes the endpoint and all its captures; the capture URL then 404s', async () => {
      const key = await signup(sys)
      const ep = await createEndpoint(sys, key)
      await capture(ep.url, { body: 'a' })
      await capture(ep.url, { body: 'b' })
      const del = await call('DELETE', api(sys, `/endpoints/${ep.endpoint_id}`), { key })
      assert.equal(del.status, 200)
      assert.deepEqual(del.json, { deleted: true, endpoint_id: ep.endpoint_id, requests_deleted: 2 })
      assert.equal(await captures(sys.platform.db).countDocuments({ endpoint_id: ep.endpoint_id }), 0)
      assert.equal((await capture(ep.url)).status, 404)
      assert.equal((await call('DELETE', api(sys, `/endpoints/${ep.endpoint_id}`), { key })).status, 404)
    })
  })

  describe('captured requests', () => {
    it('lists newest first with limit (default 50, max 500) and a before cursor', async () => {
      const key = await signup(sys)
      const ep = await createEndpoint(sys, key)
      for (let i = 1; i <= 55; i++) await capture(ep.url, { body: `n${i}`, headers: { 'content-type': 'text/plain' } })
      const first = await get(api(sys, `/endpoints/${ep.endpoint_id}/requests`), { key })
      assert.equal(first.json.requests.length, 50)
      assert.equal(first.json.requests[0].body, 'n55')
      assert.equal(first.json.requests[0].id, 55)
      assert.equal(first.json.next_before, 6)
      const older = await get(api(sys, `/endpoints/${ep.endpoint_id}/requests?before=${first.json.next_before}`), { key })
      assert.deepEqual(older.json.requests.map((r: any) => r.body), ['n5', 'n4', 'n3', 'n2', 'n1'])
      assert.equal(older.json.next_before, null)
      const two = await get(api(sys, `/endpoints/${ep.endpoint_id}/requests?limit=2`), { key })
      assert.deepEqual(two.json.requests.map((r: any) => r.id), [55, 54])
      const newer = await get(api(sys, `/endpoints/${ep.endpoint_id}/requests?after=53`), { key })
      assert.deepEqual(newer.json.requests.map((r: any) => r.id), [55, 54])
      for (const q of ['limit=0', 'limit=501', 'limit=abc', 'before=-1', 'limit=1.5']) {
        const r = await get(api(sys, `/endpoints/${ep.endpoint_id}/requests?${q}`), { key })
        assert.equal(r.status, 400, q)
        assert.match(r.json.error, /^(limit|before) /)
      }
      const one = await get(api(sys, `/endpoints/${ep.endpoint_id}/requests/3`), { key })
      assert.equal(one.json.body, 'n3')
      assert.deepEqual(one.json.forward_attempts, [])
      assert.equal((await get(api(sys, `/endpoints/${ep.endpoint_id}/requests/999`), { key })).status, 404)
      assert.equal((await get(api(sys, `/endpoints/${ep.endpoint_id}/requests/abc`), { key })).status, 400)
    })

    it('daily limit holds under concurrency: 20 captures with 5 left → exactly 5 stored, the rest 429', async () => {
      const key = await signup(sys)
      const ep = await createEndpoint(sys, key)
      const acc = await findAccountByKey(sys.platform.db, 'webhooks', key)
      const day = new Date().toISOString().slice(0, 10)
      await sys.platform.db.collection('webhook_counters').updateOne(
        { _id: `day:${acc!._id}:${day}` as any },
        { $set: { count: 95, account_id: acc!._id, day } },
        { upsert: true },
      )
      const rs = await Promise.all(Array.from({ length: 20 }, (_, i) => capture(ep.url, { body: `c${i}` })))
      assert.equal(rs.filter((r) => r.status === 200).length, 5)
      const refused = rs.filter((r) => r.status === 429)
      assert.equal(refused.length, 15)
      assert.match(refused[0]!.json.error, /Daily request limit reached: the free plan allows 100/)
      assert.ok(Number(refused[0]!.headers.get('retry-after')) > 0)
      assert.equal(await captures(sys.platform.db).countDocuments({ endpoint_id: ep.endpoint_id }), 5)
      const ids = (await get(api(sys, `/endpoints/${ep.endpoint_id}/requests`), { key })).json.requests.map((r: any) => r.id)
      assert.equal(new Set(ids).size, 5)
    })

    it('free endpoints expire 7 days after creation: capture, list and API then 404', async () => {
      const key = await signup(sys)
      const ep = await createEndpoint(sys, key)
      assert.equal((await capture(ep.url)).status, 200)
      clock.advance(7 * 86_400_000 + 1_000)
      try {
        assert.equal((await capture(ep.url)).status, 404)
        assert.equal((await get(api(sys, `/endpoints/${ep.endpoint_id}/requests`), { key })).status, 404)
        assert.equal((await get(api(sys, '/endpoints'), { key })).json.endpoints.length, 0)
      } finally {
        clock.reset()
      }
    })
  })

  describe('tenant isolation', () => {
    it("another account's token is a 404 everywhere", async () => {
      const owner = await signup(sys, 'starter')
      const other = await signup(sys, 'starter')
      const ep = await createEndpoint(sys, owner)
      await capture(ep.url, { body: 'secret' })
      const t = ep.endpoint_id
      const attempts = [
        call('GET', api(sys, `/endpoints/${t}`), { key: other }),
        call('GET', api(sys, `/endpoints/${t}/requests`), { key: other }),
        call('GET', api(sys, `/endpoints/${t}/requests/1`), { key: other }),
        call('GET', api(sys, `/endpoints/${t}/requests/1/body`), { key: other }),
        call('POST', api(sys, `/endpoints/${t}/requests/1/replay`), { key: other, json: { url: 'https://example.com' } }),
        call('POST', api(sys, `/endpoints/${t}/requests/1/retry`), { key: other, json: {} }),
        call('POST', api(sys, `/endpoints/${t}/requests/1/verify`), { key: other, json: { secret: 's' } }),
        call('DELETE', api(sys, `/endpoints/${t}`), { key: other }),
      ]
      for (const r of await Promise.all(attempts)) {
        assert.equal(r.status, 404, r.text)
        assert.ok(!r.text.includes('secret'))
      }
      assert.equal((await get(api(sys, '/endpoints'), { key: other })).json.endpoints.length, 0)
      assert.equal((await get(api(sys, `/endpoints/${t}/requests`), { key: owner })).json.requests.length, 1)
    })
  })

  it('mounts the shared checkout: POST /api/v1/checkout needs a webhooks key and a valid plan', async () => {
    assert.equal((await post(api(sys, '/checkout'), { plan: 'starter' })).status, 401)
    const key = await signup(sys)
    const bad = await post(api(sys, '/checkout'), { plan: 'gold' }, { key })
    assert.equal(bad.status, 400)
    assert.match(bad.json.error, /plan/i)
  })

  it('unknown routes are JSON 404s', async () => {
    const r = await get(`${sys.url.webhooks}/api/v1/nope`)
    assert.equal(r.status, 404)
    assert.deepEqual(r.json, { error: 'Not found' })
  })
})
