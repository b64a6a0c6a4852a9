// The HAR export of a set is streamed (chunked, one entry at a time): large bodies arrive whole
// and in capture order, bodies over 1 MiB are left out with a note, and a page larger than the
// batches the route reads its ids in keeps its exact bounds (limit, before, after).
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { startSystem, type TestSystem } from './helpers/system.ts'
import { get } from './helpers/http.ts'
import { api, capture, createEndpoint, signup } from './helpers/webhooks.ts'

describe('webhooks: streamed HAR export', function () {
  this.timeout(90_000)
  let sys: TestSystem
  before(async () => {
    sys = await startSystem({ services: ['webhooks'], workers: false })
  })
  after(async () => sys?.stop())

  it('streams entries with 1 MiB bodies whole, oldest first; a larger body is left out', async () => {
    const key = await signup(sys, 'pro')
    const ep = await createEndpoint(sys, key)
    const bin = randomBytes(1024 * 1024)
    const text = Buffer.from(JSON.stringify({ s: 'ä'.repeat(400_000) }))
    const big = randomBytes(1024 * 1024 + 1)
    for (const body of [bin, text, Buffer.alloc(0), big]) assert.equal((await capture(ep.url, { body, headers: { 'content-type': 'application/octet-stream' } })).status, 200)
    const r = await fetch(api(sys, `/endpoints/${ep.endpoint_id}/requests.har`), { headers: { authorization: `Bearer ${key}` } })
    assert.equal(r.status, 200)
    assert.equal(r.headers.get('transfer-encoding'), 'chunked')
    assert.equal(r.headers.get('content-length'), null)
    const har = JSON.parse(await r.text())
    assert.equal(har.log.version, '1.2')
    const e = har.log.entries
    assert.deepEqual(e.map((x: any) => x.comment.split(' ')[1]), ['#1', '#2', '#3', '#4'])
    assert.equal(e[0].request.postData.encoding, 'base64')
    assert.ok(Buffer.from(e[0].request.postData.text, 'base64').equals(bin))
    assert.equal(e[1].request.postData.text, text.toString('utf8'))
    assert.equal(e[2].request.postData, undefined)
    assert.match(e[3].request.postData.comment, /body of 1048577 bytes left out/)
  })

  it('a page past the id batches keeps exact bounds: limit, before and after', async () => {
    const key = await signup(sys)
    const ep = await createEndpoint(sys, key)
    for (let i = 1; i <= 40; i++) await capture(`${ep.url}/n${i}`, { body: `${i}` })
    const ids = async (qs: string) => {
      const r = await get(api(sys, `/endpoints/${ep.endpoint_id}/requests.har?${qs}`), { key })
      assert.equal(r.status, 200, r.text)
      return r.json.log.entries.map((x: any) => Number(x.comment.split(' ')[1].slice(1)))
    }
    const range = (a: number, b: number) => Array.from({ length: b - a + 1 }, (_, i) => a + i)
    assert.deepEqual(await ids('limit=35&before=38'), range(3, 37))
    assert.deepEqual(await ids('limit=500'), range(1, 40))
    assert.deepEqual(await ids('limit=20&after=5'), range(21, 40))
    assert.deepEqual(await ids('limit=33&path_prefix=/n1'), [1, ...range(10, 19)])
  })
})
