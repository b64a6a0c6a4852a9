// Segments over HTTP: CRUD, rules that reference them, unknown segments refused, a change reaching
// a second API instance (own connections, same data) through the cache's pub/sub, 409 when deleting
// a segment in use, tenant isolation and the plan limit.
import assert from 'node:assert/strict'
import { setPlan } from '../src/platform/accounts.ts'
import { sha256 } from '../src/platform/ids.ts'
import { assertJsonError, call, get, post } from './helpers/http.ts'
import { startSystem, type TestSystem } from './helpers/system.ts'

async function eventually(check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > end) throw new Error('condition not reached')
    await new Promise((r) => setTimeout(r, 20))
  }
}

describe('flags: segments', () => {
  let sys: TestSystem
  let base: string
  let n = 0

  async function signup(plan?: 'business') {
    const r = await post(`${base}/api/v1/signup`, { email: `seg${++n}@example.com` })
    assert.equal(r.status, 201, r.text)
    if (plan) {
      const acc = await sys.platform.db.collection('accounts').findOne({ key_hash: sha256(r.json.api_key) })
      await setPlan(sys.platform.db, String(acc!._id), plan)
    }
    return { apiKey: r.json.api_key as string, sdkKey: r.json.sdk_key as string, projectId: r.json.project.id as string }
  }

  before(async () => {
    sys = await startSystem({ services: ['flags'], workers: false })
    base = sys.url.flags
  })
  after(async () => {
    await sys?.stop()
  })

  it('a rule requires its segments; a segment change reaches another instance; in use → 409 naming the flags', async () => {
    const t = await signup('business')
    const segs = `${base}/api/v1/projects/${t.projectId}/segments`
    const flags = `${base}/api/v1/projects/${t.projectId}/flags`
    const c = await post(segs, { name: 'beta-testers', conditions: [{ attribute: 'email', operator: 'ends_with', value: '@beta.example' }] }, { key: t.apiKey })
    assert.equal(c.status, 201, c.text)
    assert.equal(c.json.name, 'beta-testers')
    assertJsonError(await post(segs, { name: 'beta-testers', conditions: [{ attribute: 'a', operator: 'eq', value: 'b' }] }, { key: t.apiKey }), 409)
    assertJsonError(await post(segs, { name: 'x', conditions: [{ attribute: 'a', operator: 'gt', value: 'abc' }] }, { key: t.apiKey }), 400, 'conditions[0].value must be a number')
    // A name of only dots could never be named in …/segments/<name>: refused, nothing made.
    for (const name of ['.', '..', '...']) {
      assertJsonError(await post(segs, { name, conditions: [{ attribute: 'a', operator: 'eq', value: 'b' }] }, { key: t.apiKey }), 400, 'name cannot be made only of dots (a URL cannot name it)')
    }
    assert.deepEqual((await get(segs, { key: t.apiKey })).json.segments.map((s: { name: string }) => s.name), ['beta-testers'])

    for (const key of ['new-ui', 'dark-mode']) {
      const f = await post(flags, { key, type: 'boolean', enabled: true, default_value: false, rules: [{ conditions: [{ attribute: 'country', operator: 'eq', value: 'DE' }], segments: ['beta-testers'], value: true }] }, { key: t.apiKey })
      assert.equal(f.status, 201, f.text)
    }
    assertJsonError(
      await post(flags, { key: 'other', rules: [{ conditions: [], segments: ['beta-testers', 'nope'], value: 'true' }] }, { key: t.apiKey }),
      400,
      'rules[0].segments[1] is not a segment of this project ("nope")',
    )
    assertJsonError(await get(`${flags}/other`, { key: t.apiKey }), 404)

    const sys2 = await startSystem({ services: ['flags'], workers: false, env: { MONGO_DB: sys.env.MONGO_DB!, QUEUE_PREFIX: sys.env.QUEUE_PREFIX! } })
    try {
      const onBoth = async (context: Record<string, unknown>) => {
        const out = []
        for (const b of [base, sys2.url.flags]) {
          const r = await post(`${b}/api/v1/evaluate`, { sdk_key: t.sdkKey, flags: ['new-ui'], context })
          assert.equal(r.status, 200, r.text)
          out.push(r.json.flags['new-ui'].value)
        }
        return out
      }
      assert.deepEqual(await onBoth({ country: 'DE', email: 'a@beta.example' }), [true, true])
      assert.deepEqual(await onBoth({ country: 'DE', email: 'a@other.example' }), [false, false])
      assert.deepEqual(await onBoth({ country: 'AT', email: 'a@beta.example' }), [false, false])
      // Widen the segment: both instances serve the new rule (through the pub/sub, not a restart).
      const u = await call('PUT', `${segs}/beta-testers`, { json: { conditions: [{ attribute: 'email', operator: 'ends_with', value: ['@beta.example', '@other.example'] }] }, key: t.apiKey })
      assert.equal(u.status, 200, u.text)
      await eventually(async () => (await onBoth({ country: 'DE', email: 'a@other.example' })).every((v) => v === true))
    } finally {
      await sys2.stop()
    }

    const d = await call('DELETE', `${segs}/beta-testers`, { key: t.apiKey })
    assertJsonError(d, 409, 'Segment "beta-testers" is used by flags: dark-mode, new-ui')
    assert.deepEqual(d.json.flags, ['dark-mode', 'new-ui'])
    assert.equal((await get(`${segs}/beta-testers`, { key: t.apiKey })).status, 200)
    // Once no rule uses it, it can go.
    for (const key of ['new-ui', 'dark-mode']) assert.equal((await call('PUT', `${flags}/${key}`, { json: { rules: [] }, key: t.apiKey })).status, 200)
    assert.equal((await call('DELETE', `${segs}/beta-testers`, { key: t.apiKey })).status, 204)
    assert.deepEqual((await get(segs, { key: t.apiKey })).json, { segments: [] })
  })

  it("another account's segments are 404; the plan limit is a 403 naming it", async () => {
    const a = await signup()
    const b = await signup()
    const segsA = `${base}/api/v1/projects/${a.projectId}/segments`
    assert.equal((await post(segsA, { name: 's0', conditions: [{ attribute: 'a', operator: 'eq', value: 'b' }] }, { key: a.apiKey })).status, 201)
    assertJsonError(await get(`${segsA}/s0`, { key: b.apiKey }), 404, 'Project not found')
    assertJsonError(await call('DELETE', `${segsA}/s0`, { key: b.apiKey }), 404)
    for (let i = 1; i < 5; i++) assert.equal((await post(segsA, { name: `s${i}`, conditions: [{ attribute: 'a', operator: 'eq', value: 'b' }] }, { key: a.apiKey })).status, 201)
    const over = await post(segsA, { name: 's5', conditions: [{ attribute: 'a', operator: 'eq', value: 'b' }] }, { key: a.apiKey })
    assertJsonError(over, 403, 'Plan limit reached: the free plan allows 5 segments per project')
    assert.equal(over.json.limit, 'segments_per_project')
  })
})
