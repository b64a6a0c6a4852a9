// The flag-set endpoint (GET /api/v1/flag-set) for in-process SDKs: server SDK keys (made and
// rotated per environment), the whole rule set in the versioned format validated against
// docs/schemas/flag-set.v1.json, ETag / If-None-Match → 304, and every refusal: client-side keys
// 403, missing / unknown / rotated / deleted keys 401, the plan's rate limit 429.
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { Ajv2020 } from 'ajv/dist/2020.js'
import { startSystem, type TestSystem } from './helpers/system.ts'
import { assertJsonError, call, get, post } from './helpers/http.ts'
import { flagsAccount, type FlagsAccount } from './helpers/flags.ts'
import { until } from './helpers/wait.ts'

const schema = JSON.parse(readFileSync(new URL('../docs/schemas/flag-set.v1.json', import.meta.url), 'utf8'))
const validate = new Ajv2020({ allErrors: true, strict: false }).compile<any>(schema)

describe('flags: flag set for in-process SDKs', () => {
  let sys: TestSystem
  let base: string
  let t: FlagsAccount
  let serverKey: string
  const flagSet = (key?: string, headers: Record<string, string> = {}) => call('GET', `${base}/api/v1/flag-set`, { key, headers })
  const rotate = (acc: FlagsAccount, env: string) => post(`${acc.project}/environments/${env}/server-key/rotate`, undefined, { key: acc.apiKey })

  before(async () => {
    sys = await startSystem({ services: ['flags'], workers: false })
    base = sys.url.flags
    t = await flagsAccount(sys, 'business')
    const seg = await post(`${t.project}/segments`, { name: 'staff', conditions: [{ attribute: 'email', operator: 'ends_with', value: '@example.com', case_insensitive: true }] }, { key: t.apiKey })
    assert.equal(seg.status, 201, seg.text)
    const flags = [
      { key: 'checkout', type: 'boolean', enabled: true, default_value: false, rules: [{ conditions: [{ attribute: 'country', operator: 'in', value: ['DE', 'AT'] }], segments: ['staff'], value: true }] },
      { key: 'banner', enabled: true, default_value: 'none', rules: [{ conditions: [{ attribute: 'targetingKey', operator: 'percent', value: 30 }], value: 'sale' }] },
      {
        key: 'layout',
        type: 'string',
        enabled: true,
        default_value: 'a',
        rules: [{ conditions: [{ attribute: 'version', operator: 'semver_gte', value: '2.0.0' }], variants: [{ name: 'wide', weight: 50, value: 'wide' }, { name: 'narrow', weight: 50, value: 'narrow' }], stickiness: 'user_id' }],
        fallthrough: { variants: [{ name: 'x', weight: 25, value: 'x' }, { name: 'y', weight: 75, value: 'y' }] },
      },
      { key: 'limits', type: 'object', enabled: false, default_value: { max: 3 }, rules: [] },
    ]
    for (const f of flags) {
      const r = await post(`${t.project}/flags`, f, { key: t.apiKey })
      assert.equal(r.status, 201, r.text)
    }
    const r = await rotate(t, 'production')
    assert.equal(r.status, 200, r.text)
    serverKey = r.json.server_key
  })
  after(async () => {
    await sys?.stop()
  })

  it('makes a server key per environment, shown once, its hint listed with the environments', async () => {
    assert.match(serverKey, /^fbsrv_[A-Za-z0-9]{40}$/)
    const envs = await get(`${t.project}/environments`, { key: t.apiKey })
    assert.equal(envs.status, 200, envs.text)
    const prod = envs.json.environments.find((e: { name: string }) => e.name === 'production')
    assert.equal(prod.server_key_hint, `${serverKey.slice(0, 10)}…`)
    assert.ok(!envs.text.includes(serverKey), 'the key itself is never listed')
  })

  it('answers the whole rule set in format 1, valid against the JSON Schema, with the ETag as its tag', async () => {
    const r = await flagSet(serverKey)
    assert.equal(r.status, 200, r.text)
    assert.match(r.headers.get('content-type') ?? '', /application\/json/)
    assert.ok(validate(r.json), JSON.stringify(validate.errors))
    assert.equal(r.json.format_version, 1)
    assert.equal(r.json.project, t.projectId)
    assert.equal(r.json.environment, 'production')
    assert.equal(r.headers.get('etag'), `"${r.json.etag}"`)
    assert.deepEqual(r.json.flags.map((f: { key: string }) => f.key), ['banner', 'checkout', 'layout', 'limits'])
    assert.deepEqual(r.json.segments, [{ name: 'staff', conditions: [{ attribute: 'email', operator: 'ends_with', value: '@example.com', case_insensitive: true }] }])
    const layout = r.json.flags.find((f: { key: string }) => f.key === 'layout')
    // The variant allocations travel with the flag: an evaluator needs them to pick the same variant.
    assert.deepEqual(layout.rules[0].variants.map((v: { buckets: unknown }) => v.buckets), [[[0, 5000]], [[5000, 10000]]])
    assert.deepEqual(layout.fallthrough.variants.map((v: { buckets: unknown }) => v.buckets), [[[0, 2500]], [[2500, 10000]]])
    assert.equal(layout.rules[0].stickiness, 'user_id')
    const limits = r.json.flags.find((f: { key: string }) => f.key === 'limits')
    assert.deepEqual(limits, { key: 'limits', type: 'object', enabled: false, default_value: { max: 3 }, rules: [] })
  })

  it('the schema refuses what is not format 1 (it can fail)', () => {
    const good = { format_version: 1, project: 'p', environment: 'production', etag: 'e', flags: [], segments: [] }
    assert.equal(validate(good), true)
    assert.equal(validate({ ...good, format_version: 2 }), false)
    assert.equal(validate({ ...good, flags: [{ key: 'k', enabled: true, default_value: 'x', rules: [{ conditions: [{ attribute: 'a', operator: 'gt', value: 'ten' }], value: 'y' }] }] }), false)
    assert.equal(validate({ ...good, flags: [{ key: 'k', enabled: true, default_value: 'x', rules: [{ conditions: [] }] }] }), false)
  })

  it('If-None-Match with the ETag → 304 until a flag changes, then 200 with a new tag', async () => {
    const first = await flagSet(serverKey)
    const etag = first.headers.get('etag')!
    const same = await flagSet(serverKey, { 'if-none-match': etag })
    assert.equal(same.status, 304)
    assert.equal(same.body.length, 0)
    assert.equal((await flagSet(serverKey, { 'if-none-match': `W/${etag}, "other"` })).status, 304)
    const put = await call('PUT', `${t.project}/flags/banner`, { key: t.apiKey, json: { default_value: 'off' } })
    assert.equal(put.status, 200, put.text)
    const next = await until('a new flag set', async () => {
      const r = await flagSet(serverKey, { 'if-none-match': etag })
      return r.status === 200 ? r : undefined
    })
    assert.notEqual(next.headers.get('etag'), etag)
    assert.equal(next.json.flags.find((f: { key: string }) => f.key === 'banner').default_value, 'off')
    assert.ok(validate(next.json), JSON.stringify(validate.errors))
  })

  it('a client-side SDK key gets 403 with a JSON error saying which key is needed; it still evaluates', async () => {
    assertJsonError(await flagSet(t.sdkKey), 403, /needs a server SDK key \(fbsrv_…\); client-side SDK keys \(fbsdk_…\) may only evaluate/, { exact: true })
    const x = await call('GET', `${base}/api/v1/flag-set`, { headers: { 'x-api-key': t.sdkKey } })
    assert.equal(x.status, 403, x.text)
    const ofrep = await post(`${base}/ofrep/v1/evaluate/flags/banner`, { context: {} }, { key: t.sdkKey })
    assert.equal(ofrep.status, 200, ofrep.text)
  })

  it('no key, an unknown key, an API key → 401 with a Bearer challenge', async () => {
    for (const key of [undefined, 'fbsrv_' + 'x'.repeat(40), t.apiKey, 'Bearer']) {
      const r = await flagSet(key)
      assertJsonError(r, 401, 'Unauthorized: invalid or missing SDK key', { exact: true })
      assert.equal(r.headers.get('www-authenticate'), 'Bearer')
    }
  })

  it('a server key also evaluates over OFREP (the same key serves both ways)', async () => {
    const r = await post(`${base}/ofrep/v1/evaluate/flags/checkout`, { context: { country: 'DE', email: 'A@Example.com' } }, { key: serverKey })
    assert.equal(r.status, 200, r.text)
    assert.equal(r.json.value, true)
    assert.equal(r.json.reason, 'TARGETING_MATCH')
  })

  it("an environment's server key reads that environment's rules; deleting the environment retires it", async () => {
    const env = await post(`${t.project}/environments`, { name: 'staging' }, { key: t.apiKey })
    assert.equal(env.status, 201, env.text)
    const put = await call('PUT', `${t.project}/flags/banner?environment=staging`, { key: t.apiKey, json: { enabled: true, default_value: 'staging-only' } })
    assert.equal(put.status, 200, put.text)
    const k = await rotate(t, 'staging')
    assert.equal(k.status, 200, k.text)
    const r = await flagSet(k.json.server_key)
    assert.equal(r.status, 200, r.text)
    assert.equal(r.json.environment, 'staging')
    assert.equal(r.json.flags.find((f: { key: string }) => f.key === 'banner').default_value, 'staging-only')
    assert.notEqual((await flagSet(serverKey)).json.flags.find((f: { key: string }) => f.key === 'banner').default_value, 'staging-only')
    const del = await call('DELETE', `${t.project}/environments/staging`, { key: t.apiKey })
    assert.equal(del.status, 204, del.text)
    await until('the deleted environment\'s key refused', async () => ((await flagSet(k.json.server_key)).status === 401 ? true : undefined))
  })

  it('rotation: the new key works, the old one is refused', async () => {
    const acc = await flagsAccount(sys, 'business')
    const a = await rotate(acc, 'production')
    assert.equal((await flagSet(a.json.server_key)).status, 200)
    const b = await rotate(acc, 'production')
    assert.equal(b.status, 200, b.text)
    assert.notEqual(b.json.server_key, a.json.server_key)
    assert.equal((await flagSet(b.json.server_key)).status, 200)
    await until('the old key refused', async () => ((await flagSet(a.json.server_key)).status === 401 ? true : undefined))
    const hist = await get(`${acc.project}/history`, { key: acc.apiKey })
    assert.equal(hist.status, 200, hist.text)
    assert.ok(hist.text.includes(b.json.server_key_hint) && !hist.text.includes(b.json.server_key), 'the history shows the hint, never the key')
  })

  it('making a server key: unknown environment or project → 404, no API key → 401, nothing changed', async () => {
    assertJsonError(await rotate(t, 'nope'), 404, 'Environment not found')
    assertJsonError(await post(`${base}/api/v1/projects/nope/environments/production/server-key/rotate`, undefined, { key: t.apiKey }), 404, 'Project not found')
    const other = await flagsAccount(sys)
    assertJsonError(await post(`${t.project}/environments/production/server-key/rotate`, undefined, { key: other.apiKey }), 404, 'Project not found')
    assertJsonError(await post(`${t.project}/environments/production/server-key/rotate`), 401)
    assert.equal((await flagSet(serverKey)).status, 200, 'the existing key still works')
  })

  it("past the plan's requests per second → 429 with Retry-After", async () => {
    const acc = await flagsAccount(sys, 'free')
    const k = (await rotate(acc, 'production')).json.server_key as string
    const answers = await Promise.all(Array.from({ length: 60 }, () => flagSet(k)))
    const refused = answers.filter((r) => r.status === 429)
    assert.ok(refused.length > 0, `statuses: ${answers.map((r) => r.status).join(',')}`)
    assert.ok(Number(refused[0]!.headers.get('retry-after')) >= 1)
    assert.match(refused[0]!.json.error, /Rate limit exceeded: the free plan allows 20 evaluation requests per second/)
  })
})
