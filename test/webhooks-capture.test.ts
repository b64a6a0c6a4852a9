import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { gzipSync } from 'node:zlib'
import { startSystem, type TestSystem } from './helpers/system.ts'
import { call, get } from './helpers/http.ts'
import { RawConnection, rawRequest } from './helpers/raw-http.ts'
import { api, capture, createEndpoint, signup } from './helpers/webhooks.ts'
import { captureCollection, captureKey } from '../src/webhooks/store/capture-store.ts'
import { endpoints } from '../src/webhooks/store/endpoint-store.ts'

describe('webhooks: capture', () => {
  let sys: TestSystem
  let key: string
  let ep: any
  before(async () => {
    sys = await startSystem({ services: ['webhooks'], workers: false })
    key = await signup(sys)
    ep = await createEndpoint(sys, key, { name: 'capture tests' })
  })
  after(async () => sys?.stop())

  const latest = async () => (await get(api(sys, `/endpoints/${ep.endpoint_id}/requests?limit=1`), { key })).json.requests[0]
  const full = async (id: number) => (await get(api(sys, `/endpoints/${ep.endpoint_id}/requests/${id}`), { key })).json

  it('stores a JSON body with odd whitespace byte-for-byte and answers the default response', async () => {
    const body = '{ "a" :1,\n\t"b":[ 1 ,2 ] ,"é":"\u00e9\u4e2d" }  \n'
    const r = await capture(ep.url, { body, headers: { 'content-type': 'application/json' } })
    assert.equal(r.status, 200)
    assert.equal(r.headers.get('content-type'), 'application/json')
    assert.equal(r.text, '{"ok":true}')
    const got = await latest()
    assert.equal(r.headers.get('x-capture-id'), String(got.id), 'the answer names the stored capture')
    assert.equal(got.body, body)
    assert.equal(got.body_encoding, 'utf8')
    assert.equal(got.method, 'POST')
    assert.equal(got.content_type, 'application/json')
    assert.equal(got.size_bytes, Buffer.byteLength(body))
    assert.equal(got.ip_address, '127.0.0.1')
    assert.match(got.received_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}$/)
    assert.equal(got.headers['content-type'], 'application/json')
  })

  it('stores binary and gzip bodies exactly, returned as base64', async () => {
    for (const bytes of [randomBytes(4096), gzipSync(Buffer.from('hello '.repeat(1000)))]) {
      await capture(ep.url, { body: bytes, headers: { 'content-type': 'application/octet-stream', 'content-encoding': 'gzip' } })
      const got = await latest()
      assert.equal(got.body_encoding, 'base64')
      assert.ok(Buffer.from(got.body, 'base64').equals(bytes))
      const raw = await get(api(sys, `/endpoints/${ep.endpoint_id}/requests/${got.id}/body`), { key })
      assert.ok(raw.body.equals(bytes))
    }
  })

  it('stores multipart and form bodies exactly', async () => {
    const form = new FormData()
    form.append('field', 'välue & more')
    form.append('file', new Blob([randomBytes(300)]), 'x.bin')
    const req = new Request('http://x', { method: 'POST', body: form })
    const bytes = Buffer.from(await req.arrayBuffer())
    await capture(ep.url, { body: bytes, headers: { 'content-type': req.headers.get('content-type')! } })
    const got = await full((await latest()).id)
    assert.ok(Buffer.from(got.body, got.body_encoding === 'base64' ? 'base64' : 'utf8').equals(bytes))
    assert.match(got.content_type, /^multipart\/form-data; boundary=/)

    await capture(ep.url, { body: 'a=1&b=%C3%A9+x', headers: { 'content-type': 'application/x-www-form-urlencoded' } })
    assert.equal((await latest()).body, 'a=1&b=%C3%A9+x')
  })

  it('keeps sub-path, query, lower-cased headers and the raw header list in order', async () => {
    await capture(`${ep.url}/github/events?x=1&y=%20z`, { method: 'PUT', body: 'x', headers: { 'X-Hub-Signature-256': 'sha256=ab', 'X-Custom': 'A' } })
    const got = await latest()
    assert.equal(got.method, 'PUT')
    assert.equal(got.path, `/hook/${ep.endpoint_id}/github/events`)
    assert.equal(got.query, 'x=1&y=%20z')
    assert.equal(got.headers['x-hub-signature-256'], 'sha256=ab')
    const names = got.raw_headers.filter((_: string, i: number) => i % 2 === 0).map((h: string) => h.toLowerCase())
    assert.ok(names.indexOf('x-hub-signature-256') < names.indexOf('x-custom'))
  })

  it('captures GET, PATCH and DELETE; answers HEAD and OPTIONS without storing; refuses other methods', async () => {
    for (const method of ['GET', 'PATCH', 'DELETE']) {
      const r = await call(method, `${ep.url}?m=${method}`)
      assert.equal(r.status, 200)
      assert.equal((await latest()).method, method)
    }
    const before = (await latest()).id
    const head = await call('HEAD', ep.url)
    assert.equal(head.status, 200)
    assert.equal(head.headers.get('x-capture-id'), null, 'nothing stored, no id')
    const opt = await call('OPTIONS', ep.url, { headers: { origin: 'http://a.test', 'access-control-request-method': 'POST' } })
    assert.equal(opt.status, 204)
    assert.match(opt.headers.get('allow')!, /POST/)
    assert.equal((await latest()).id, before)
    const weird = await call('PROPFIND', ep.url)
    assert.equal(weird.status, 405)
    assert.equal(weird.json.error, 'Method not allowed')
  })

  it('answers with the configured response code, body and content type', async () => {
    const custom = await createEndpoint(sys, key, { response_code: 201, response_body: '<ok/>', response_content_type: 'application/xml' })
    const r = await capture(custom.url, { body: 'x' })
    assert.equal(r.status, 201)
    assert.equal(r.text, '<ok/>')
    assert.equal(r.headers.get('content-type'), 'application/xml')
    await call('DELETE', api(sys, `/endpoints/${custom.endpoint_id}`), { key })
  })

  it('a capture whose id is already taken is stored under the next id, counted once', async () => {
    const db = sys.platform.db
    const seq = (await endpoints(db).findOne({ _id: ep.endpoint_id }))!.seq
    // Occupy the id the next capture will be given, as a concurrent capture with the same id would.
    await captureCollection(db, ep.endpoint_id, seq + 1).insertOne({ _id: captureKey(ep.endpoint_id, seq + 1), endpoint_id: 'someone-else' } as never)
    const usage = async () => (await get(api(sys, '/account'), { key })).json.usage.requests_today
    const before = await usage()
    const r = await capture(ep.url, { body: 'after a collision', headers: { 'content-type': 'text/plain' } })
    assert.equal(r.status, 200, r.text)
    const got = await latest()
    assert.equal(got.id, seq + 2)
    assert.equal(r.headers.get('x-capture-id'), String(seq + 2), 'the id it was stored under, not the one first given')
    assert.equal(got.body, 'after a collision')
    assert.equal(await usage(), before + 1)
    assert.equal((await captureCollection(db, ep.endpoint_id, seq + 1).findOne({ _id: captureKey(ep.endpoint_id, seq + 1) }))!.endpoint_id, 'someone-else')
  })

  it('unknown token → 404 and nothing stored', async () => {
    for (const url of [`${sys.url.webhooks}/hook/nope`, `${sys.url.webhooks}/hook/${'A'.repeat(22)}/x`, `${sys.url.webhooks}/hook/`, `${sys.url.webhooks}/hook/%3Cscript%3E`]) {
      const r = await capture(url, { body: 'x' })
      assert.equal(r.status, 404, url)
      assert.equal(r.json.error, 'Endpoint not found')
    }
  })

  it('stores a 25 MiB body intact and refuses one byte more with 413', async function () {
    this.timeout(120_000)
    const big = randomBytes(25 * 1024 * 1024)
    const r = await capture(ep.url, { body: big })
    assert.equal(r.status, 200, r.text)
    const list = await latest()
    assert.equal(list.size_bytes, big.length)
    assert.equal(list.body_omitted, true)
    const raw = await get(api(sys, `/endpoints/${ep.endpoint_id}/requests/${list.id}/body`), { key })
    assert.ok(raw.body.equals(big))
    const one = await full(list.id)
    assert.ok(Buffer.from(one.body, 'base64').equals(big))

    const before = list.id
    const tooBig = await capture(ep.url, { body: Buffer.alloc(25 * 1024 * 1024 + 1) }).catch((e) => ({ status: 0, error: e }))
    assert.equal(tooBig.status, 413)
    assert.equal((await latest()).id, before)
  })

  it('a body shorter or longer than its Content-Length → 400 JSON, and the extra or missing bytes are never stored', async () => {
    const own = await createEndpoint(sys, key, { name: 'length mismatch' })
    const hook = new URL(own.url)
    const head = (length: number) => [`POST ${hook.pathname} HTTP/1.1`, `Host: ${hook.host}`, 'Content-Type: text/plain', `Content-Length: ${length}`]
    const stored = async () => (await get(api(sys, `/endpoints/${own.endpoint_id}/requests`), { key })).json.requests
    // Shorter: the sender says 10 bytes, sends 3 and has nothing more to send.
    const short = await rawRequest(own.url, head(10), 'abc', { halfClose: true })
    assert.equal(short.status, 400)
    assert.match(short.headers['content-type']!, /^application\/json/)
    assert.match(JSON.parse(short.body.toString()).error, /shorter than its Content-Length/)
    assert.deepEqual(await stored(), [])
    // Longer: 3 bytes declared, 6 sent in one go. HTTP reads the extra bytes as the next request,
    // which is not one: the declared bytes are a capture answered in its turn, then a 400 for the
    // rest, and the connection closes. Never are the extra bytes a capture.
    const conn = await RawConnection.open(own.url)
    try {
      conn.write(`${head(3).join('\r\n')}\r\n\r\nabcdef`)
      conn.halfClose()
      const first = await conn.answer()
      assert.ok(first.status < 300, `the declared bytes are captured: ${first.status} ${first.body.toString()}`)
      const long = await conn.answer()
      assert.equal(long.status, 400)
      assert.match(JSON.parse(long.body.toString()).error, /^Malformed HTTP request/)
      assert.equal((await conn.end()).fin, true)
    } finally {
      conn.destroy()
    }
    assert.deepEqual((await stored()).map((r: { body: string }) => r.body), ['abc'])
    // Headers past Node's 16 KiB limit: refused by the parser too, and answered in JSON.
    const big = await rawRequest(own.url, [...head(1), `X-Big: ${'x'.repeat(20_000)}`], 'a', { halfClose: true })
    assert.equal(big.status, 431)
    assert.equal(JSON.parse(big.body.toString()).error, 'Request headers too large')
  })
})
