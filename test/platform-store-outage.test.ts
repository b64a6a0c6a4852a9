// MongoDB down: every service answers requests that need the store with 503, a JSON error and
// Retry-After (as it does when Redis is down), never a 500. This file runs its own engine process
// so that stopping it leaves the shared one alone.
import assert from 'node:assert/strict'
import { startMongoEngine, type EmbeddedMongo } from '../src/embedded/mongo-engine.ts'
import { startSystem, type TestSystem } from './helpers/system.ts'
import { call, get, post, type Res } from './helpers/http.ts'

function assertUnavailable(res: Res, what: string): void {
  assert.equal(res.status, 503, `${what}: ${res.status} ${res.text}`)
  assert.match(res.headers.get('content-type') ?? '', /application\/json/, what)
  assert.deepEqual(Object.keys(res.json), ['error'], what)
  assert.match(res.json.error, /unavailable/i, what)
  assert.match(res.headers.get('retry-after') ?? '', /^\d+$/, `${what}: Retry-After`)
}

describe('platform: MongoDB outage', function () {
  this.timeout(120_000)
  let engine: EmbeddedMongo
  let sys: TestSystem
  const keys = { invoice: '', flags: '', webhooks: '' }
  let projectId = ''
  let token = ''

  before(async () => {
    engine = await startMongoEngine()
    sys = await startSystem({ workers: false, env: { MONGO_URL: engine.url } })
    keys.invoice = (await post(`${sys.url.invoice}/signup`, { email: 'outage@example.com' })).json.api_key
    const f = (await post(`${sys.root.flags}/api/v1/signup`, { email: 'outage@example.com' })).json
    keys.flags = f.api_key
    projectId = f.project.id
    keys.webhooks = (await post(`${sys.root.webhooks}/api/v1/signup`, { email: 'outage@example.com' })).json.api_key
    token = (await post(`${sys.root.webhooks}/api/v1/endpoints`, {}, { key: keys.webhooks })).json.endpoint_id
    assert.ok(keys.invoice && keys.flags && keys.webhooks && projectId && token, 'setup')
    // Everything worked while the store was up.
    assert.equal((await get(`${sys.url.invoice}/usage`, { key: keys.invoice })).status, 200)
    await engine.child.stop()
  })
  after(async () => {
    await sys?.stop()
    await engine?.child.stop()
  })

  const cases: Array<[string, () => Promise<Res>]> = [
    ['invoice POST /signup', () => post(`${sys.url.invoice}/signup`, { email: 'new@example.com' })],
    ['invoice GET /usage', () => get(`${sys.url.invoice}/usage`, { key: keys.invoice })],
    ['invoice POST /subscribe', () => post(`${sys.url.invoice}/subscribe`, { email: 'news@example.com' })],
    ['flags POST /api/v1/signup', () => post(`${sys.root.flags}/api/v1/signup`, { email: 'new@example.com' })],
    ['flags GET /api/v1/projects', () => get(`${sys.root.flags}/api/v1/projects`, { key: keys.flags })],
    ['flags GET /api/v1/projects/:id/flags', () => get(`${sys.root.flags}/api/v1/projects/${projectId}/flags`, { key: keys.flags })],
    ['webhooks POST /api/v1/signup', () => post(`${sys.root.webhooks}/api/v1/signup`, { email: 'new@example.com' })],
    ['webhooks GET /api/v1/endpoints', () => get(`${sys.root.webhooks}/api/v1/endpoints`, { key: keys.webhooks })],
    ['webhooks GET /api/v1/endpoints/:token/requests', () => get(`${sys.root.webhooks}/api/v1/endpoints/${token}/requests`, { key: keys.webhooks })],
    ['webhooks POST /hook/:token (capture)', () => call('POST', `${sys.root.webhooks}/hook/${token}`, { raw: '{"a":1}' })],
  ]
  for (const [name, request] of cases) {
    it(`${name} → 503 with Retry-After`, async () => assertUnavailable(await request(), name))
  }

  it('/readyz reports the store as failed', async () => {
    const res = await get(`${sys.root.invoice}/readyz`)
    assert.equal(res.status, 503)
    assert.match(res.json.checks.mongo, /^failed/)
  })
})
