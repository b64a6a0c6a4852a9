// Every operation every service declares in its /openapi.json, sent hostile input as an outsider
// would: path parameters that are real ids, another account's, and hostile strings; every query
// parameter given wrong types, huge, control and invalid-UTF-8 values; bodies that are not JSON,
// the wrong JSON type, deep, huge, `__proto__`-keyed, or an object with each declared property set
// to each hostile value, plus random JSON from fast-check; under the wrong content types and
// without a key. Never a 5xx, and every 4xx of the JSON API is a JSON `{error}`.
import assert from 'node:assert/strict'
import fc from 'fast-check'
import { startSystem, type TestSystem } from './helpers/system.ts'
import { post } from './helpers/http.ts'
import { flagsAccount, type FlagsAccount } from './helpers/flags.ts'
import { createEndpoint, signup as webhooksSignup } from './helpers/webhooks.ts'

const METHODS = ['get', 'post', 'put', 'patch', 'delete']
const HOSTILE_SEGMENTS = ['x', '0', '-1', '1e309', '%00', '%FF', '%C0%80', '..%2F..%2Fetc', '__proto__', 'constructor', '%E4%B8%BC', 'a'.repeat(4000), '%20', 'null']
const HOSTILE_QUERY = ['', '-1', '0', '1e309', 'NaN', 'abc', '%00', '%FF', '%ED%A0%80', '%', '__proto__', '9'.repeat(400), 'x'.repeat(5000), '%E4%B8%BC', '[]', 'true']
const HOSTILE_VALUES: unknown[] = [null, true, 0, -1, 1.5, 1e308, -1e308, '', ' ', '\u0000', '💥'.repeat(3), 'x'.repeat(70_000), [], [null], {}, { __proto__: null, a: 1 }, '2026-02-30', 'javascript:alert(1)', 'http://169.254.169.254/latest']
const RAW_BODIES: [string, Buffer][] = [
  ['empty', Buffer.alloc(0)],
  ['truncated JSON', Buffer.from('{"a": ')],
  ['null', Buffer.from('null')],
  ['array', Buffer.from('[]')],
  ['string', Buffer.from('"x"')],
  ['number', Buffer.from('12')],
  ['invalid UTF-8', Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d])],
  ['BOM', Buffer.from('\ufeff{}')],
  ['deep', Buffer.from(`${'['.repeat(20_000)}${']'.repeat(20_000)}`)],
  ['proto', Buffer.from('{"__proto__": {"admin": true}, "constructor": {"prototype": {"x": 1}}}')],
  ['duplicate keys', Buffer.from('{"a": 1, "a": {"b": 2}}')],
  ['huge', Buffer.from(`{"a": "${'y'.repeat(3 << 20)}"}`)],
]

interface Operation {
  service: string
  method: string
  path: string
  op: any
}

describe('every OpenAPI operation under hostile input: never a 5xx', function () {
  this.timeout(600_000)
  let sys: TestSystem
  const keys: Record<string, string> = {}
  let flags: FlagsAccount
  let other: FlagsAccount
  const ids: Record<string, string[]> = {}
  const operations: Operation[] = []

  before(async () => {
    // Workers too: /readyz answers 503 while nothing consumes the queues.
    sys = await startSystem()
    keys.invoice = (await post(`${sys.url.invoice}/signup`, { email: `fuzz-${Date.now()}@example.com` })).json.api_key
    flags = await flagsAccount(sys)
    other = await flagsAccount(sys)
    keys.flags = flags.apiKey
    keys.webhooks = await webhooksSignup(sys)
    await post(`${flags.project}/flags`, { key: 'fuzz-flag', type: 'boolean', default_value: false }, { key: flags.apiKey })
    const ep = await createEndpoint(sys, keys.webhooks)
    const otherEp = await createEndpoint(sys, await webhooksSignup(sys))
    // Real ids of this account first, then another account's (a 404, never a 5xx).
    ids.id = [flags.projectId, other.projectId]
    ids.key = ['fuzz-flag']
    ids.flag_key = ['fuzz-flag']
    ids.name = ['production', 'development']
    ids.token = [ep.endpoint_id, otherEp.endpoint_id]
    for (const [service, root] of Object.entries(sys.root)) {
      const doc = await (await fetch(`${root}/openapi.json`)).json()
      for (const [path, item] of Object.entries<any>(doc.paths)) {
        for (const [method, op] of Object.entries<any>(item)) if (METHODS.includes(method)) operations.push({ service, method, path, op })
      }
    }
  })
  after(async () => sys?.stop())

  /** Sends one request; SSE answers are cut once their headers are in. Returns the status. */
  async function send(o: Operation, path: string, init: { body?: Buffer | string; type?: string; auth?: boolean }, what: string) {
    const headers: Record<string, string> = {}
    if (init.type) headers['content-type'] = init.type
    if (init.auth !== false && keys[o.service]) headers.authorization = `Bearer ${keys[o.service]}`
    const ac = new AbortController()
    const r = await fetch(`${sys.root[o.service]}${path}`, { method: o.method.toUpperCase(), headers, body: init.body as BodyInit | undefined, signal: ac.signal })
    const stream = (r.headers.get('content-type') ?? '').startsWith('text/event-stream')
    const text = stream ? '' : await r.text()
    if (stream) ac.abort()
    const where = `${o.method.toUpperCase()} ${path.slice(0, 160)} (${o.service}, ${what})`
    assert.ok(r.status < 500, `${where} answered ${r.status}: ${text.slice(0, 300)}`)
    // The JSON API's refusals are JSON errors; capture URLs answer what their endpoint is set to.
    if (r.status >= 400 && !o.path.startsWith('/hook/') && !stream && (r.headers.get('content-type') ?? '').includes('json')) {
      assert.equal(typeof JSON.parse(text).error, 'string', `${where}: ${r.status} carries {error}: ${text.slice(0, 200)}`)
    }
    return r.status
  }

  const fill = (path: string, pick: (name: string) => string) => path.replace(/\{([^}]+)\}/g, (_, name: string) => pick(name))

  it('path, query, body and content-type fuzz of every operation', async () => {
    assert.ok(operations.length > 100, `operations found: ${operations.length}`)
    const statuses = new Map<number, number>()
    let sent = 0
    for (const o of operations) {
      const count = (s: number) => {
        sent++
        statuses.set(s, (statuses.get(s) ?? 0) + 1)
      }
      const params: any[] = o.op.parameters ?? []
      const real = (name: string) => ids[name]?.[0] ?? 'x'
      const paths = [fill(o.path, real)]
      if (o.path.includes('{')) {
        for (const seg of HOSTILE_SEGMENTS) paths.push(fill(o.path, () => seg))
        paths.push(fill(o.path, (name) => ids[name]?.[1] ?? 'y'))
      }
      const json = !!o.op.requestBody?.content?.['application/json']
      const props = Object.keys(o.op.requestBody?.content?.['application/json']?.schema?.properties ?? {})
      for (const p of paths) count(await send(o, p, json ? { body: '{}', type: 'application/json' } : {}, 'path'))
      const base = paths[0]!
      for (const q of params.filter((x) => x.in === 'query')) {
        for (const v of HOSTILE_QUERY) count(await send(o, `${base}?${q.name}=${v}`, {}, `query ${q.name}`))
        count(await send(o, `${base}?${q.name}=1&${q.name}=2`, {}, `query ${q.name} twice`))
      }
      if (o.method === 'get' || o.method === 'delete') continue
      count(await send(o, base, {}, 'no key, no body'))
      for (const [what, body] of RAW_BODIES) count(await send(o, base, { body, type: 'application/json' }, what))
      for (const type of ['text/plain', 'application/xml', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/json; charset=latin1']) {
        count(await send(o, base, { body: '{"a":1}', type }, type))
      }
      for (const prop of props) {
        for (const v of HOSTILE_VALUES) count(await send(o, base, { body: JSON.stringify({ [prop]: v }), type: 'application/json' }, `${prop}=${JSON.stringify(v)?.slice(0, 40)}`))
      }
      const random = fc.sample(fc.jsonValue({ maxDepth: 4 }), { numRuns: 15, seed: o.path.length * 31 + o.method.length })
      for (const v of random) count(await send(o, base, { body: JSON.stringify(v), type: 'application/json' }, `random ${JSON.stringify(v).slice(0, 80)}`))
    }
    // The fuzz reached past the refusals: some answers were successes, most were 4xx.
    assert.ok((statuses.get(200) ?? 0) > 0 && (statuses.get(400) ?? 0) > 100 && (statuses.get(404) ?? 0) > 0, JSON.stringify([...statuses]))
    assert.ok(sent > 3000, `requests sent: ${sent}`)
  })
})
