// The feature-flag management API through HTTP: signup, projects (with SDK-key rotation), flags,
// validation, plan limits (also under concurrency), tenant isolation and malformed input.
import assert from 'node:assert/strict'
import { setPlan } from '../src/platform/accounts.ts'
import { sha256 } from '../src/platform/ids.ts'
import { startSystem, type TestSystem } from './helpers/system.ts'
import { assertJsonError, call, get, post } from './helpers/http.ts'

interface Tenant {
  apiKey: string
  sdkKey: string
  projectId: string
  accountId: string
}

describe('flags API: management', () => {
  let sys: TestSystem
  let api: string
  let n = 0

  async function signup(email = `user${++n}@example.com`): Promise<Tenant> {
    const r = await post(`${api}/signup`, { email })
    assert.equal(r.status, 201, r.text)
    const acc = await sys.platform.db.collection('accounts').findOne({ key_hash: sha256(r.json.api_key) })
    return { apiKey: r.json.api_key, sdkKey: r.json.sdk_key, projectId: r.json.project.id, accountId: String(acc!._id) }
  }
  const put = (url: string, json: unknown, key: string) => call('PUT', url, { json, key })
  const del = (url: string, key: string) => call('DELETE', url, { key })
  const flagsUrl = (t: Tenant, p = t.projectId) => `${api}/projects/${p}/flags`
  const flagCount = async (projectId: string) => sys.platform.db.collection('flags').countDocuments({ project_id: projectId })
  const evaluate = (sdkKey: string, flags: string[], context = {}) => post(`${api}/evaluate`, { sdk_key: sdkKey, flags, context })

  before(async () => {
    sys = await startSystem({ services: ['flags'], workers: false })
    api = `${sys.url.flags}/api/v1`
  })
  after(async () => sys?.stop())

  describe('signup', () => {
    it('returns the API key, the SDK key of a first project, plan and limits', async () => {
      const r = await post(`${api}/signup`, { email: 'First@Example.com' })
      assert.equal(r.status, 201, r.text)
      assert.match(r.json.api_key, /^fb_[0-9A-Za-z]{40}$/)
      assert.match(r.json.sdk_key, /^fbsdk_[0-9A-Za-z]{40}$/)
      assert.equal(r.json.plan, 'free')
      assert.deepEqual(r.json.limits, { projects: 2, flags_per_project: 20, evaluations_per_second: 20 })
      assert.equal(r.json.project.name, 'Default')
      assert.equal(r.json.project.flag_count, 0)
      assert.ok(r.json.sdk_key.startsWith(r.json.project.sdk_key_hint.replace('…', '')))
      // Both keys work, each where it belongs.
      assert.equal((await get(`${api}/projects`, { key: r.json.api_key })).status, 200)
      assert.equal((await evaluate(r.json.sdk_key, [])).status, 200)
    })

    it('stores keys only as hashes', async () => {
      const t = await signup()
      const db = sys.platform.db
      const dump = JSON.stringify([
        await db.collection('accounts').find({}).toArray(),
        await db.collection('flag_projects').find({}).toArray(),
      ])
      assert.ok(!dump.includes(t.apiKey) && !dump.includes(t.sdkKey))
      assert.ok(dump.includes(sha256(t.apiKey)) && dump.includes(sha256(t.sdkKey)))
    })

    it('rejects a duplicate e-mail with 409 (case-insensitive)', async () => {
      await signup('dup@example.com')
      assertJsonError(await post(`${api}/signup`, { email: ' DUP@example.com ' }), 409, /already exists/)
    })

    it('rejects bad input with 400 and creates nothing', async () => {
      const before = await sys.platform.db.collection('accounts').countDocuments()
      assertJsonError(await post(`${api}/signup`, {}), 400, 'email is required')
      assertJsonError(await post(`${api}/signup`, { email: 42 }), 400, 'email must be a string')
      assertJsonError(await post(`${api}/signup`, { email: 'not-an-email' }), 400, /valid e-mail/)
      assertJsonError(await post(`${api}/signup`, { email: `${'a'.repeat(300)}@x.com` }), 400, /at most 254/)
      assertJsonError(await call('POST', `${api}/signup`, { raw: '{"email":' }), 400, 'Malformed JSON body')
      assertJsonError(await call('POST', `${api}/signup`, { raw: '' }), 400, 'email is required')
      assertJsonError(await call('POST', `${api}/signup`, { raw: '[]' }), 400)
      assertJsonError(await call('POST', `${api}/signup`, { raw: 'email=a@b.c', headers: { 'content-type': 'application/x-www-form-urlencoded' } }), 415)
      assert.equal(await sys.platform.db.collection('accounts').countDocuments(), before)
    })
  })

  describe('authentication', () => {
    it('401 for a missing, unknown or wrong-kind key', async () => {
      const t = await signup()
      assertJsonError(await get(`${api}/projects`), 401, 'Unauthorized: invalid or missing API key')
      assertJsonError(await get(`${api}/projects`, { key: 'fb_nope' }), 401)
      assertJsonError(await get(`${api}/projects`, { key: t.sdkKey }), 401)
      assertJsonError(await get(`${api}/projects`, { key: 'dm_' + t.apiKey.slice(3) }), 401)
      assertJsonError(await post(flagsUrl(t), { key: 'x' }), 401)
    })
  })

  describe('projects', () => {
    it('lists, creates (with its own SDK key) and reads projects', async () => {
      const t = await signup()
      const created = await post(`${api}/projects`, { name: '  Mobile app 📱 ' }, { key: t.apiKey })
      assert.equal(created.status, 201, created.text)
      assert.equal(created.json.name, 'Mobile app 📱')
      assert.match(created.json.sdk_key, /^fbsdk_/)
      assert.notEqual(created.json.sdk_key, t.sdkKey)
      const list = await get(`${api}/projects`, { key: t.apiKey })
      assert.deepEqual(list.json.projects.map((p: any) => p.name), ['Default', 'Mobile app 📱'])
      assert.ok(list.json.projects.every((p: any) => !('sdk_key' in p)))
      const one = await get(`${api}/projects/${created.json.id}`, { key: t.apiKey })
      assert.equal(one.status, 200)
      assert.equal(one.json.id, created.json.id)
      assertJsonError(await get(`${api}/projects/nope`, { key: t.apiKey }), 404, 'Project not found')
    })

    it('validates the name', async () => {
      const t = await signup()
      assertJsonError(await post(`${api}/projects`, {}, { key: t.apiKey }), 400, 'name is required')
      assertJsonError(await post(`${api}/projects`, { name: '   ' }, { key: t.apiKey }), 400, 'name must not be empty')
      assertJsonError(await post(`${api}/projects`, { name: 7 }, { key: t.apiKey }), 400, 'name must be a string')
      assertJsonError(await post(`${api}/projects`, { name: 'x'.repeat(101) }, { key: t.apiKey }), 400, /at most 100/)
      assertJsonError(await post(`${api}/projects`, { name: 'a', extra: 1 }, { key: t.apiKey }), 400, /unknown field: extra/)
      assert.equal((await get(`${api}/projects`, { key: t.apiKey })).json.projects.length, 1)
    })

    it('403 at the plan limit, naming it', async () => {
      const t = await signup()
      assert.equal((await post(`${api}/projects`, { name: 'second' }, { key: t.apiKey })).status, 201)
      const r = await post(`${api}/projects`, { name: 'third' }, { key: t.apiKey })
      assertJsonError(r, 403, 'Plan limit reached: the free plan allows 2 projects')
      assert.equal(r.json.limit, 'projects')
      assert.equal((await get(`${api}/projects`, { key: t.apiKey })).json.projects.length, 2)
    })

    it('N concurrent creates at the limit: exactly the allowed number succeed', async () => {
      const t = await signup()
      await setPlan(sys.platform.db, t.accountId, 'starter') // 10 projects, 1 exists
      const rs = await Promise.all(Array.from({ length: 16 }, (_, i) => post(`${api}/projects`, { name: `p${i}` }, { key: t.apiKey })))
      assert.equal(rs.filter((r) => r.status === 201).length, 9)
      assert.equal(rs.filter((r) => r.status === 403).length, 7)
      assert.equal((await get(`${api}/projects`, { key: t.apiKey })).json.projects.length, 10)
    })

    it('rotates the SDK key: the new key works, the old one is refused', async () => {
      const t = await signup()
      await post(flagsUrl(t), { key: 'f', enabled: true }, { key: t.apiKey })
      // Twice: the second is answered from the replica's memory (key, hash and flags all held).
      for (let i = 0; i < 2; i++) assert.equal((await evaluate(t.sdkKey, ['f'])).json.flags.f.value, 'true')
      const r = await post(`${api}/projects/${t.projectId}/sdk-key/rotate`, undefined, { key: t.apiKey })
      assert.equal(r.status, 200, r.text)
      assert.match(r.json.sdk_key, /^fbsdk_/)
      assert.notEqual(r.json.sdk_key, t.sdkKey)
      for (let i = 0; i < 2; i++) assertJsonError(await evaluate(t.sdkKey, ['f']), 401, 'Unauthorized: invalid or missing SDK key')
      assert.equal((await evaluate(r.json.sdk_key, ['f'])).json.flags.f.value, 'true')
      assertJsonError(await post(`${api}/projects/nope/sdk-key/rotate`, undefined, { key: t.apiKey }), 404)
    })
  })

  describe('flags', () => {
    it('creates with defaults, lists and reads a flag', async () => {
      const t = await signup()
      const r = await post(flagsUrl(t), { key: 'new-checkout' }, { key: t.apiKey })
      assert.equal(r.status, 201, r.text)
      assert.equal(r.json.key, 'new-checkout')
      assert.equal(r.json.name, 'new-checkout')
      assert.equal(r.json.enabled, false)
      assert.equal(r.json.default_value, 'true')
      assert.deepEqual(r.json.rules, [])
      const full = await post(
        flagsUrl(t),
        {
          key: 'Pricing_v2.beta',
          name: 'Prix — 价格',
          enabled: true,
          default_value: 'control',
          rules: [{ conditions: [{ attribute: 'age', operator: 'eq', value: 30 }, { attribute: 'tier', operator: 'in', value: ['a', true] }], value: 'blue' }],
        },
        { key: t.apiKey },
      )
      assert.equal(full.status, 201, full.text)
      assert.equal(full.json.name, 'Prix — 价格')
      // Condition values are stored as the strings they compare as.
      assert.deepEqual(full.json.rules[0].conditions, [
        { attribute: 'age', operator: 'eq', value: '30' },
        { attribute: 'tier', operator: 'in', value: ['a', 'true'] },
      ])
      const list = await get(flagsUrl(t), { key: t.apiKey })
      assert.deepEqual(list.json.flags.map((f: any) => f.key), ['Pricing_v2.beta', 'new-checkout'])
      const one = await get(`${flagsUrl(t)}/Pricing_v2.beta`, { key: t.apiKey })
      assert.equal(one.json.default_value, 'control')
      assertJsonError(await get(`${flagsUrl(t)}/missing`, { key: t.apiKey }), 404, 'Flag not found')
    })

    it('409 on an existing key, and nothing changes', async () => {
      const t = await signup()
      await post(flagsUrl(t), { key: 'dup', name: 'first' }, { key: t.apiKey })
      assertJsonError(await post(flagsUrl(t), { key: 'dup', name: 'second' }, { key: t.apiKey }), 409, /already exists/)
      assert.equal((await get(`${flagsUrl(t)}/dup`, { key: t.apiKey })).json.name, 'first')
      assert.equal(await flagCount(t.projectId), 1)
      const p = await get(`${api}/projects/${t.projectId}`, { key: t.apiKey })
      assert.equal(p.json.flag_count, 1)
      // The same key in another project is fine.
      const other = await post(`${api}/projects`, { name: 'other' }, { key: t.apiKey })
      assert.equal((await post(flagsUrl(t, other.json.id), { key: 'dup' }, { key: t.apiKey })).status, 201)
    })

    it('PUT is a partial update: toggle, replace rules, rename; the key cannot change', async () => {
      const t = await signup()
      const url = `${flagsUrl(t)}/banner`
      await post(flagsUrl(t), { key: 'banner', name: 'Banner', rules: [{ conditions: [], value: 'x' }] }, { key: t.apiKey })
      const on = await put(url, { enabled: true }, t.apiKey)
      assert.equal(on.status, 200, on.text)
      assert.equal(on.json.enabled, true)
      assert.equal(on.json.name, 'Banner')
      assert.deepEqual(on.json.rules, [{ conditions: [], value: 'x' }])
      assert.equal((await evaluate(t.sdkKey, ['banner'])).json.flags.banner.value, 'x')
      const rules = await put(url, { rules: [{ conditions: [{ attribute: 'c', operator: 'eq', value: 'DE' }], value: 'de' }] }, t.apiKey)
      assert.equal(rules.json.rules[0].value, 'de')
      assert.equal(rules.json.enabled, true)
      assert.equal((await evaluate(t.sdkKey, ['banner'], { c: 'DE' })).json.flags.banner.value, 'de')
      assert.equal((await put(url, { name: 'Top banner', key: 'banner' }, t.apiKey)).json.name, 'Top banner')
      const off = await put(url, { enabled: false }, t.apiKey)
      assert.equal(off.json.enabled, false)
      assert.deepEqual((await evaluate(t.sdkKey, ['banner'], { c: 'DE' })).json.flags.banner, { value: 'false', reason: 'DISABLED', rule_index: null })
      assertJsonError(await put(url, { key: 'renamed' }, t.apiKey), 400, 'key cannot be changed')
      assertJsonError(await put(url, {}, t.apiKey), 400, /at least one of/)
      assertJsonError(await put(url, { enabled: 'yes' }, t.apiKey), 400, 'enabled must be a boolean')
      assertJsonError(await put(`${flagsUrl(t)}/nope`, { enabled: true }, t.apiKey), 404, 'Flag not found')
      assertJsonError(await put(`${api}/projects/nope/flags/banner`, { enabled: true }, t.apiKey), 404, 'Project not found')
      const after = await get(url, { key: t.apiKey })
      assert.equal(after.json.name, 'Top banner')
      assert.equal(after.json.enabled, false)
    })

    it('DELETE removes permanently; evaluating it then reports not found', async () => {
      const t = await signup()
      await post(flagsUrl(t), { key: 'gone', enabled: true }, { key: t.apiKey })
      assert.equal((await evaluate(t.sdkKey, ['gone'])).json.flags.gone.value, 'true')
      const r = await del(`${flagsUrl(t)}/gone`, t.apiKey)
      assert.equal(r.status, 204)
      assertJsonError(await del(`${flagsUrl(t)}/gone`, t.apiKey), 404, 'Flag not found')
      assertJsonError(await get(`${flagsUrl(t)}/gone`, { key: t.apiKey }), 404)
      assert.deepEqual((await evaluate(t.sdkKey, ['gone'])).json.flags.gone, { value: null, reason: 'FLAG_NOT_FOUND', rule_index: null })
      assertJsonError(await get(`${api}/evaluate/gone?sdk_key=${t.sdkKey}`), 404, 'Flag not found')
      // The key can be used again.
      assert.equal((await post(flagsUrl(t), { key: 'gone' }, { key: t.apiKey })).status, 201)
    })

    it('validates flags and rules with messages naming the path, changing nothing', async () => {
      const t = await signup()
      const cases: Array<[unknown, string | RegExp]> = [
        [{}, 'key is required'],
        [{ key: 12 }, 'key must be a string'],
        [{ key: '' }, /key must be 1-128 characters/],
        [{ key: 'has space' }, /key must be 1-128 characters/],
        [{ key: 'ü' }, /key must be 1-128 characters/],
        [{ key: 'k'.repeat(129) }, /key must be 1-128 characters/],
        [{ key: '.' }, 'key cannot be made only of dots (a URL cannot name it)'],
        [{ key: '..' }, 'key cannot be made only of dots (a URL cannot name it)'],
        [{ key: '....' }, 'key cannot be made only of dots (a URL cannot name it)'],
        [{ key: 'k', enabled: 'true' }, 'enabled must be a boolean'],
        [{ key: 'k', name: '' }, 'name must not be empty'],
        [{ key: 'k', rules: {} }, 'rules must be an array'],
        [{ key: 'k', rules: [{ value: 'x' }] }, 'rules[0].conditions is required'],
        [{ key: 'k', rules: [{ conditions: [] }] }, 'rules[0].value is required'],
        [{ key: 'k', rules: [{ conditions: [], value: true }] }, 'rules[0].value must be a string'],
        [{ key: 'k', rules: [{ conditions: [], value: 'a' }, { conditions: [{ attribute: 'c', operator: 'greater', value: 1 }], value: 'b' }] }, /^rules\[1\]\.conditions\[0\]\.operator must be one of: eq, neq, contains, not_contains, starts_with, ends_with, in, not_in, matches, gt, /],
        [{ key: 'k', rules: [{ conditions: [], value: 'a' }, { conditions: [{ attribute: 'c', operator: 'percent', value: 101 }], value: 'b' }] }, 'rules[1].conditions[0].value must be <= 100'],
        [{ key: 'k', rules: [{ conditions: [{ attribute: 'c', operator: 'percent', value: -1 }], value: 'b' }] }, 'rules[0].conditions[0].value must be >= 0'],
        [{ key: 'k', rules: [{ conditions: [{ attribute: 'c', operator: 'percent', value: '50' }], value: 'b' }] }, 'rules[0].conditions[0].value must be a number'],
        [{ key: 'k', rules: [{ conditions: [{ attribute: 'c', operator: 'in', value: 'DE' }], value: 'b' }] }, 'rules[0].conditions[0].value must be an array'],
        [{ key: 'k', rules: [{ conditions: [{ attribute: 'c', operator: 'in', value: [] }], value: 'b' }] }, 'rules[0].conditions[0].value must have at least 1 item'],
        [{ key: 'k', rules: [{ conditions: [{ attribute: 'c', operator: 'in', value: Array(501).fill('x') }], value: 'b' }] }, 'rules[0].conditions[0].value must have at most 500 items'],
        [{ key: 'k', rules: [{ conditions: [{ attribute: 'c', operator: 'eq', value: { a: 1 } }], value: 'b' }] }, 'rules[0].conditions[0].value must be a string'],
        [{ key: 'k', rules: [{ conditions: [{ attribute: 'c', operator: 'eq', value: 'x'.repeat(1025) }], value: 'b' }] }, 'rules[0].conditions[0].value must be at most 1024 characters'],
        [{ key: 'k', rules: [{ conditions: [{ operator: 'eq', value: 'x' }], value: 'b' }] }, 'rules[0].conditions[0].attribute is required'],
        [{ key: 'k', rules: [{ conditions: [{ attribute: '', operator: 'eq', value: 'x' }], value: 'b' }] }, 'rules[0].conditions[0].attribute must not be empty'],
        [{ key: 'k', rules: [{ conditions: [{ attribute: 'c', operator: 'eq', value: 'x', foo: 1 }], value: 'b' }] }, 'rules[0].conditions[0] has unknown field: foo'],
        [{ key: 'k', rules: Array(51).fill({ conditions: [], value: 'x' }) }, 'rules must have at most 50 items'],
        [{ key: 'k', rules: [{ conditions: Array(21).fill({ attribute: 'a', operator: 'eq', value: 'x' }), value: 'x' }] }, 'rules[0].conditions must have at most 20 items'],
        [{ key: 'k', enabled: true, extra: 1 }, 'body has unknown field: extra'],
        [[1, 2], 'body must be an object'],
      ]
      for (const [body, message] of cases) assertJsonError(await post(flagsUrl(t), body, { key: t.apiKey }), 400, message)
      for (const raw of ['{"key":', '{"key":"a",}', 'nul', '\u0000', '{"key":"\\ud800"']) {
        assertJsonError(await call('POST', flagsUrl(t), { raw, key: t.apiKey }), 400)
      }
      assert.equal(await flagCount(t.projectId), 0)
      assert.equal((await get(`${api}/projects/${t.projectId}`, { key: t.apiKey })).json.flag_count, 0)
    })

    it('403 at the flags-per-project limit; N concurrent creates: exactly the allowed number succeed', async () => {
      const t = await signup()
      const rs = await Promise.all(Array.from({ length: 26 }, (_, i) => post(flagsUrl(t), { key: `f${i}` }, { key: t.apiKey })))
      assert.equal(rs.filter((r) => r.status === 201).length, 20)
      const refused = rs.filter((r) => r.status === 403)
      assert.equal(refused.length, 6)
      assert.equal(refused[0]!.json.error, 'Plan limit reached: the free plan allows 20 flags per project')
      assert.equal(refused[0]!.json.limit, 'flags_per_project')
      assert.equal(await flagCount(t.projectId), 20)
      // A duplicate at the limit is still reported as a duplicate.
      const created = rs.find((r) => r.status === 201)!.json.key
      assertJsonError(await post(flagsUrl(t), { key: created }, { key: t.apiKey }), 409)
      // Deleting gives the slot back.
      assert.equal((await del(`${flagsUrl(t)}/${created}`, t.apiKey)).status, 204)
      assert.equal((await post(flagsUrl(t), { key: 'again' }, { key: t.apiKey })).status, 201)
      assertJsonError(await post(flagsUrl(t), { key: 'one-more' }, { key: t.apiKey }), 403)
    })
  })

  describe('tenant isolation', () => {
    it("another account's project and flags are 404 and stay unchanged", async () => {
      const a = await signup()
      const b = await signup()
      await post(flagsUrl(a), { key: 'secret', enabled: true }, { key: a.apiKey })
      assertJsonError(await get(`${api}/projects/${a.projectId}`, { key: b.apiKey }), 404, 'Project not found')
      assertJsonError(await get(flagsUrl(a), { key: b.apiKey }), 404, 'Project not found')
      assertJsonError(await post(flagsUrl(a), { key: 'intruder' }, { key: b.apiKey }), 404)
      assertJsonError(await get(`${flagsUrl(a)}/secret`, { key: b.apiKey }), 404)
      assertJsonError(await put(`${flagsUrl(a)}/secret`, { enabled: false }, b.apiKey), 404)
      assertJsonError(await del(`${flagsUrl(a)}/secret`, b.apiKey), 404)
      assertJsonError(await post(`${api}/projects/${a.projectId}/sdk-key/rotate`, undefined, { key: b.apiKey }), 404)
      assert.deepEqual((await get(`${api}/projects`, { key: b.apiKey })).json.projects.map((p: any) => p.id), [b.projectId])
      // B's SDK key does not see A's flags.
      assert.equal((await evaluate(b.sdkKey, ['secret'])).json.flags.secret.reason, 'FLAG_NOT_FOUND')
      const still = await get(`${flagsUrl(a)}/secret`, { key: a.apiKey })
      assert.equal(still.json.enabled, true)
      assert.equal(await flagCount(a.projectId), 1)
      assert.equal((await evaluate(a.sdkKey, ['secret'])).json.flags.secret.value, 'true')
    })
  })

  describe('malformed requests', () => {
    it('never answer 500', async () => {
      const t = await signup()
      await post(flagsUrl(t), { key: 'f' }, { key: t.apiKey })
      const targets: Array<[string, string]> = [
        ['POST', `${api}/signup`],
        ['POST', `${api}/projects`],
        ['POST', flagsUrl(t)],
        ['PUT', `${flagsUrl(t)}/f`],
        ['POST', `${api}/evaluate`],
      ]
      const bodies = ['', '{', '[]', 'null', '"x"', '123', '{"a":{"b":{"c":[[[[]]]]}}}', '{"key":null,"rules":null}', `{"name":"${'x'.repeat(2_000_000)}"}`, '\ufeff{}']
      for (const [method, url] of targets) {
        for (const raw of bodies) {
          const r = await call(method, url, { raw, key: t.apiKey })
          assert.ok(r.status >= 400 && r.status < 500, `${method} ${url} ${raw.slice(0, 20)} → ${r.status} ${r.text.slice(0, 100)}`)
          assert.equal(typeof r.json?.error, 'string')
        }
      }
      for (const path of ['/projects/%E0%A4%A', '/projects/' + 'x'.repeat(5000) + '/flags', '/projects/x/flags/%00']) {
        const r = await get(`${api}${path}`, { key: t.apiKey })
        assert.ok(r.status >= 400 && r.status < 500, `${path} → ${r.status}`)
      }
      assertJsonError(await call('PATCH', `${flagsUrl(t)}/f`, { json: {}, key: t.apiKey }), 405)
      assertJsonError(await get(`${api}/nothing-here`), 404)
      assert.equal((await get(`${flagsUrl(t)}/f`, { key: t.apiKey })).json.enabled, false)
    })
  })
})
