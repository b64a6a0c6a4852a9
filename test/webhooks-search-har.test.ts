// Search filters on GET …/requests (each alone and combined, 400 naming a bad one) and the HAR 1.2
// export of one capture and of a filtered set, validated against the HAR schema (har-schema + ajv).
import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import { randomBytes } from 'node:crypto'
import { Ajv } from 'ajv'
import addFormats from 'ajv-formats'
import { startSystem, type TestSystem } from './helpers/system.ts'
import { get } from './helpers/http.ts'
import { api, capture, createEndpoint, signup } from './helpers/webhooks.ts'
import { captureCollection } from '../src/webhooks/store/capture-store.ts'

const require = createRequire(import.meta.url)

function harValidator() {
  const schemas = require('har-schema') as Record<string, { $id: string }>
  const ajv = new Ajv({ strict: false, allErrors: true })
  ajv.addMetaSchema(require('ajv/dist/refs/json-schema-draft-06.json'))
  ;(addFormats as unknown as (a: Ajv) => void)(ajv) // date-time, uri: checked, not ignored
  for (const s of Object.values(schemas)) ajv.addSchema(s)
  return ajv.getSchema('har.json#')!
}

describe('webhooks: search and HAR export', () => {
  let sys: TestSystem
  let key: string
  let ep: any
  const bin = randomBytes(64)
  const ids = async (qs: string) => {
    const r = await get(api(sys, `/endpoints/${ep.endpoint_id}/requests?${qs}`), { key })
    assert.equal(r.status, 200, r.text)
    return r.json.requests.map((x: any) => x.id)
  }
  before(async () => {
    sys = await startSystem({ services: ['webhooks'], workers: false })
    key = await signup(sys)
    ep = await createEndpoint(sys, key)
    await capture(`${ep.url}/github/push?a=1`, { body: '{"action":"Opened","repo":"Queueworks"}', headers: { 'content-type': 'application/json', 'x-github-event': 'push' } }) // 1
    await capture(`${ep.url}/stripe`, { body: '{"type":"invoice.paid"}', headers: { 'content-type': 'application/json', 'stripe-signature': 't=1,v1=x' } }) // 2
    await capture(`${ep.url}/github/issue`, { method: 'PUT', body: 'plain text mentioning queueworks', headers: { 'x-github-event': 'issues' } }) // 3
    await capture(`${ep.url}/bin`, { method: 'PATCH', body: bin }) // 4
    await capture(`${ep.url}/get`, { method: 'GET' }) // 5
  })
  after(async () => sys?.stop())

  it('filters by method, sub-path prefix, header name and name:value, body text, time range; combined with paging', async () => {
    assert.deepEqual(await ids('method=put'), [3])
    assert.deepEqual(await ids('method=PUT,PATCH'), [4, 3])
    assert.deepEqual(await ids('path_prefix=/github'), [3, 1])
    assert.deepEqual(await ids('path_prefix=/github/p'), [1])
    assert.deepEqual(await ids('header=x-github-event'), [3, 1])
    assert.deepEqual(await ids('header=X-GitHub-Event:issues'), [3])
    assert.deepEqual(await ids('header=x-github-event&header=stripe-signature'), [])
    assert.deepEqual(await ids('q=QUEUEWORKS'), [3, 1], 'case-insensitive text search')
    assert.deepEqual(await ids('q=invoice.paid'), [2], 'regex characters are literal')
    assert.deepEqual(await ids('q=inv.ice'), [])
    assert.deepEqual(await ids('q=queueworks&method=POST'), [1])
    assert.deepEqual(await ids('path_prefix=/github&limit=1'), [3])
    assert.deepEqual(await ids('path_prefix=/github&before=3'), [1])
    // Time range: move capture 1 an hour back.
    const t1 = new Date(Date.now() - 3_600_000)
    await captureCollection(sys.platform.db, ep.endpoint_id, 1).updateOne({ endpoint_id: ep.endpoint_id, id: 1 }, { $set: { received_at: t1 } })
    const cut = new Date(Date.now() - 1_800_000).toISOString().slice(0, 19)
    assert.deepEqual(await ids(`until=${cut}`), [1])
    assert.deepEqual(await ids(`since=${cut}&path_prefix=/github`), [3])
    assert.deepEqual(await ids(`since=${encodeURIComponent(new Date(Date.now() - 1_800_000).toISOString())}&method=POST`), [2])
  })

  it('answers 400 naming the bad filter, and finds nothing of another tenant', async () => {
    const cases: Array<[string, RegExp]> = [
      ['method=TRACE', /^method must be one of GET, POST, PUT, PATCH, DELETE/],
      ['path_prefix=github', /^path_prefix must start with \//],
      ['header=bad%20name', /^header must be a header name/],
      ['header=a.b', /^header must be a header name/],
      ['q=', /^q must not be empty/],
      [`q=${'x'.repeat(201)}`, /^q must be at most 200 characters/],
      ['since=yesterday', /^since must be an ISO 8601 time/],
      ['until=2026-13-45T99:00', /^until must be an ISO 8601 time/],
      ['forward_status=lost', /^forward_status must be one of pending, retrying, delivered, dead/],
    ]
    for (const [qs, msg] of cases) {
      const r = await get(api(sys, `/endpoints/${ep.endpoint_id}/requests?${qs}`), { key })
      assert.equal(r.status, 400, qs)
      assert.match(r.json.error, msg, qs)
    }
    const other = await signup(sys)
    assert.equal((await get(api(sys, `/endpoints/${ep.endpoint_id}/requests?q=queueworks`), { key: other })).status, 404)
    assert.equal((await get(api(sys, `/endpoints/${ep.endpoint_id}/requests.har`), { key: other })).status, 404)
    assert.equal((await get(api(sys, `/endpoints/${ep.endpoint_id}/requests/1.har`), { key: other })).status, 404)
  })

  it('exports HAR 1.2 of one capture and of a filtered set; valid against the HAR schema; binary bodies base64', async () => {
    const validate = harValidator()
    assert.equal(validate({ log: { version: '1.2', creator: { name: 'x', version: '1' }, entries: [{ startedDateTime: 'yesterday' }] } }), false, 'the validator does refuse')
    const one = await get(api(sys, `/endpoints/${ep.endpoint_id}/requests/4.har`), { key })
    assert.equal(one.status, 200)
    assert.match(one.headers.get('content-disposition')!, /\.har"$/)
    assert.ok(validate(one.json), JSON.stringify(validate.errors))
    const e = one.json.log.entries[0]
    assert.equal(one.json.log.version, '1.2')
    assert.equal(e.request.method, 'PATCH')
    assert.equal(e.request.url, `${sys.root.webhooks}/hook/${ep.endpoint_id}/bin`)
    assert.equal(e.request.postData.encoding, 'base64')
    assert.deepEqual(Buffer.from(e.request.postData.text, 'base64'), bin)
    assert.equal(e.request.bodySize, 64)

    const set = await get(api(sys, `/endpoints/${ep.endpoint_id}/requests.har?path_prefix=/github`), { key })
    assert.equal(set.status, 200)
    assert.ok(validate(set.json), JSON.stringify(validate.errors))
    const entries = set.json.log.entries
    assert.deepEqual(entries.map((x: any) => x.request.url.replace(/^.*\/hook\/\w+/, '')), ['/github/push?a=1', '/github/issue'], 'oldest first')
    assert.deepEqual(entries[0].request.queryString, [{ name: 'a', value: '1' }])
    assert.equal(entries[0].request.postData.text, '{"action":"Opened","repo":"Queueworks"}')
    assert.equal(entries[0].request.postData.encoding, undefined)
    assert.ok(entries[0].request.headers.some((h: any) => h.name === 'x-github-event' && h.value === 'push'))
    assert.equal((await get(api(sys, `/endpoints/${ep.endpoint_id}/requests/99.har`), { key })).status, 404)
    const bad = await get(api(sys, `/endpoints/${ep.endpoint_id}/requests.har?method=NOPE`), { key })
    assert.equal(bad.status, 400)
  })
})
