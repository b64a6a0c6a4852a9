// Every search parameter of the capture list and its HAR exports, given every control character
// (NUL included: a BSON regular expression cannot hold one) and broken percent-escapes: never a
// 5xx. Text filters match such characters literally; the others answer 400 naming the parameter.
import assert from 'node:assert/strict'
import { startSystem, type TestSystem } from './helpers/system.ts'
import { get } from './helpers/http.ts'
import { api, capture, createEndpoint, signup } from './helpers/webhooks.ts'

const CONTROLS = [...Array.from({ length: 32 }, (_, i) => i), 0x7f].map((c) => `%${c.toString(16).padStart(2, '0').toUpperCase()}`)
// Invalid UTF-8, an encoded lone surrogate, an overlong NUL, a bare %.
const BROKEN = ['%FF', '%ED%A0%80', '%C0%80', '%', '%zz']
const PARAMS = ['q', 'path_prefix', 'header', 'method', 'since', 'until', 'forward_status', 'limit', 'before']
// A value each parameter accepts, to put the hostile characters into.
const WRAP: Record<string, (x: string) => string> = {
  q: (x) => `a${x}b`,
  path_prefix: (x) => `/a${x}b`,
  header: (x) => `x-h:a${x}b`,
  method: (x) => `POST${x}`,
  since: (x) => `2026-01-01${x}`,
  until: (x) => `2026-01-01${x}`,
  forward_status: (x) => `dead${x}`,
  limit: (x) => `5${x}`,
  before: (x) => `9${x}`,
}

describe('webhooks: search parameters with control characters', function () {
  this.timeout(120_000)
  let sys: TestSystem
  let key: string
  let token: string
  before(async () => {
    sys = await startSystem({ services: ['webhooks'], workers: false })
    key = await signup(sys)
    const ep = await createEndpoint(sys, key)
    token = ep.endpoint_id
    await capture(`${ep.url}/a\u0001b`.replace('\u0001', '%01'), { body: 'before a\u0000b after', headers: { 'content-type': 'text/plain' } })
    await capture(`${ep.url}/plain`, { body: 'nothing here', headers: { 'content-type': 'text/plain' } })
  })
  after(async () => sys?.stop())

  it('never answers 5xx on the list, the HAR export and a HAR of one capture; a 4xx names the parameter', async () => {
    const routes = [`/endpoints/${token}/requests`, `/endpoints/${token}/requests.har`]
    const statuses = new Map<number, number>()
    for (const route of routes) {
      for (const p of PARAMS) {
        for (const x of [...CONTROLS, ...BROKEN]) {
          const r = await get(api(sys, `${route}?${p}=${WRAP[p]!(x)}`), { key })
          statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1)
          assert.ok(r.status < 500, `${route}?${p}=${WRAP[p]!(x)} answered ${r.status}: ${r.text.slice(0, 200)}`)
          if (r.status >= 400) {
            assert.equal(typeof r.json?.error, 'string', `${p}=${x}: a JSON error`)
            const named = r.json.error.includes(p) || JSON.stringify(r.json).includes(p)
            assert.ok(named, `${p}=${x}: the error names ${p}: ${r.text}`)
          }
        }
      }
    }
    assert.ok((statuses.get(200) ?? 0) > 0 && (statuses.get(400) ?? 0) > 0, `both kinds of answers seen: ${JSON.stringify([...statuses])}`)
  })

  it('a NUL or other control character in q and path_prefix is matched literally (no 500)', async () => {
    const q = await get(api(sys, `/endpoints/${token}/requests?q=a%00b`), { key })
    assert.equal(q.status, 200, q.text)
    assert.deepEqual(q.json.requests.map((r: any) => r.id), [1])
    const none = await get(api(sys, `/endpoints/${token}/requests?q=a%01b`), { key })
    assert.deepEqual(none.json.requests, [])
    // Paths are stored as sent, escapes and all (a request line cannot carry a raw control
    // character): a decoded control character finds nothing, the escape as text finds it.
    const path = await get(api(sys, `/endpoints/${token}/requests?path_prefix=/a%01`), { key })
    assert.equal(path.status, 200, path.text)
    assert.deepEqual(path.json.requests, [])
    const escaped = await get(api(sys, `/endpoints/${token}/requests?path_prefix=/a%2501`), { key })
    assert.deepEqual(escaped.json.requests.map((r: any) => r.id), [1])
    const har = await get(api(sys, `/endpoints/${token}/requests.har?q=a%00b`), { key })
    assert.equal(har.status, 200)
    assert.equal(har.json.log.entries.length, 1)
  })
})
