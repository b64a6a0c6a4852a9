// Typed flags, the new operators' validation and weighted variants through the real API: bad
// input is a 400 naming the field and stores nothing; native evaluate answers typed values and
// variant names; the official OFREP server provider reads numbers and objects, and reports
// TYPE_MISMATCH when asked for the wrong type.
import assert from 'node:assert/strict'
import { OpenFeature, type Client } from '@openfeature/server-sdk'
import { OFREPProvider } from '@openfeature/ofrep-provider'
import { setPlan } from '../src/platform/accounts.ts'
import { sha256 } from '../src/platform/ids.ts'
import { assertJsonError, call, get, post } from './helpers/http.ts'
import { startSystem, type TestSystem } from './helpers/system.ts'

describe('flags: typed values, operators and variants over HTTP', () => {
  let sys: TestSystem
  let base: string
  let t: { apiKey: string; sdkKey: string; projectId: string }
  let client: Client
  const flagsUrl = () => `${base}/api/v1/projects/${t.projectId}/flags`
  const evaluate = async (flags: string[], context: Record<string, unknown>) => {
    const r = await post(`${base}/api/v1/evaluate`, { sdk_key: t.sdkKey, flags, context })
    assert.equal(r.status, 200, r.text)
    return r.json.flags
  }

  before(async () => {
    sys = await startSystem({ services: ['flags'], workers: false })
    base = sys.url.flags
    const r = await post(`${base}/api/v1/signup`, { email: 'typed@example.com' })
    t = { apiKey: r.json.api_key, sdkKey: r.json.sdk_key, projectId: r.json.project.id }
    const acc = await sys.platform.db.collection('accounts').findOne({ key_hash: sha256(t.apiKey) })
    await setPlan(sys.platform.db, String(acc!._id), 'business')
    const create = async (body: Record<string, unknown>) => {
      const c = await post(flagsUrl(), body, { key: t.apiKey })
      assert.equal(c.status, 201, c.text)
      return c.json
    }
    await create({
      key: 'max-items',
      type: 'number',
      enabled: true,
      default_value: 10,
      rules: [{ conditions: [{ attribute: 'app_version', operator: 'semver_gte', value: '2.0.0' }], value: 50 }],
    })
    await create({
      key: 'theme',
      type: 'object',
      enabled: true,
      default_value: { color: 'green' },
      rules: [{ conditions: [{ attribute: 'email', operator: 'ends_with', value: '@EXAMPLE.COM', case_insensitive: true }], value: { color: 'blue', dark: true } }],
    })
    await create({
      key: 'banner',
      type: 'string',
      enabled: true,
      default_value: 'none',
      rules: [{ conditions: [{ attribute: 'ip', operator: 'in_cidr', value: ['10.0.0.0/8'] }], value: 'internal' }],
      fallthrough: { variants: [{ name: 'control', weight: 50, value: 'a' }, { name: 'treatment', weight: 50, value: 'b' }] },
    })
    await create({ key: 'beta', type: 'boolean', enabled: true, rules: [{ conditions: [{ attribute: 'age', operator: 'gte', value: 18 }], value: false }] })
    await OpenFeature.setProviderAndWait('typed', new OFREPProvider({ baseUrl: base, headers: [['Authorization', `Bearer ${t.sdkKey}`]] }))
    client = OpenFeature.getClient('typed')
  })
  after(async () => {
    await OpenFeature.close()
    await sys?.stop()
  })

  it('native evaluate answers typed values, with the variant name when a split served it', async () => {
    const r = await evaluate(['max-items', 'theme', 'banner', 'beta'], { app_version: '2.1.0', email: 'a@example.com', user_id: 'user-1', age: 20 })
    assert.deepEqual(r['max-items'], { value: 50, reason: 'TARGETING_MATCH', rule_index: 0 })
    assert.deepEqual(r.theme, { value: { color: 'blue', dark: true }, reason: 'TARGETING_MATCH', rule_index: 0 })
    assert.equal(r.banner.reason, 'DEFAULT')
    assert.ok(['control', 'treatment'].includes(r.banner.variant))
    assert.equal(r.banner.value, r.banner.variant === 'control' ? 'a' : 'b')
    assert.deepEqual(r.beta, { value: false, reason: 'TARGETING_MATCH', rule_index: 0 })
    const low = await evaluate(['max-items', 'beta'], { app_version: '1.9.9', age: 'n/a' })
    assert.deepEqual(low['max-items'], { value: 10, reason: 'DEFAULT', rule_index: null })
    assert.deepEqual(low.beta, { value: true, reason: 'DEFAULT', rule_index: null })
    // Sticky: the same id gets the same variant every time.
    for (let i = 0; i < 3; i++) assert.equal((await evaluate(['banner'], { user_id: 'user-1' })).banner.variant, r.banner.variant)
  })

  it('OFREP (official server provider): numbers, objects, strings with variants; wrong type is TYPE_MISMATCH', async () => {
    const n = await client.getNumberDetails('max-items', 1, { targetingKey: 'u', app_version: '3.0.0' })
    assert.equal(n.value, 50)
    assert.equal(n.errorCode, undefined)
    const o = await client.getObjectDetails('theme', {}, { targetingKey: 'u', email: 'x@example.com' })
    assert.deepEqual(o.value, { color: 'blue', dark: true })
    const s = await client.getStringDetails('banner', 'zzz', { targetingKey: 'u', ip: '10.1.1.1' })
    assert.equal(s.value, 'internal')
    const v = await client.getStringDetails('banner', 'zzz', { targetingKey: 'user-7' })
    assert.ok(v.variant === 'control' || v.variant === 'treatment', JSON.stringify(v))
    const wrong = await client.getNumberDetails('theme', 7, { targetingKey: 'u' })
    assert.equal(wrong.value, 7)
    assert.equal(wrong.errorCode, 'TYPE_MISMATCH')
    const wrong2 = await client.getBooleanDetails('max-items', true, { targetingKey: 'u' })
    assert.equal(wrong2.errorCode, 'TYPE_MISMATCH')
  })

  it('refuses bad values with a 400 naming the field, and stores nothing', async () => {
    const rule = (c: Record<string, unknown>, value: unknown = true) => ({ key: 'bad', type: 'boolean', rules: [{ conditions: [{ attribute: 'a', operator: 'eq', value: 'x' }, c], value }] })
    const cases: [unknown, string | RegExp][] = [
      [rule({ attribute: 'a', operator: 'bigger', value: 1 }), /^rules\[0\]\.conditions\[1\]\.operator must be one of: /],
      [rule({ attribute: 'a', operator: 'gt', value: 'abc' }), 'rules[0].conditions[1].value must be a number'],
      [rule({ attribute: 'a', operator: 'semver_gt', value: '1.2' }), /^rules\[0\]\.conditions\[1\]\.value must be a semantic version/],
      [rule({ attribute: 'a', operator: 'after', value: '31/01/2026' }), /^rules\[0\]\.conditions\[1\]\.value must be an ISO 8601 date-time/],
      [rule({ attribute: 'a', operator: 'matches', value: '(a' }), /^rules\[0\]\.conditions\[1\]\.value must be a valid RE2 regular expression/],
      [rule({ attribute: 'a', operator: 'matches', value: 'a'.repeat(257) }), 'rules[0].conditions[1].value must be at most 256 characters'],
      [rule({ attribute: 'a', operator: 'matches', value: '(a)\\1' }), /^rules\[0\]\.conditions\[1\]\.value must be a valid RE2/],
      [rule({ attribute: 'a', operator: 'in_cidr', value: ['10.0.0.0/33'] }), /^rules\[0\]\.conditions\[1\]\.value must be IP addresses or CIDR ranges/],
      [rule({ attribute: 'a', operator: 'eq', value: 'x', negate: 'yes' }), 'rules[0].conditions[1].negate must be a boolean'],
      [rule({ attribute: 'a', operator: 'eq', value: 'x' }, 'true'), 'rules[0].value must be true or false (the flag is of type boolean)'],
      [{ key: 'bad', type: 'number', default_value: '5' }, 'default_value must be a number (the flag is of type number)'],
      [{ key: 'bad', type: 'string' }, 'default_value is required for a flag of type string'],
      [{ key: 'bad', type: 'date', default_value: 1 }, /^type must be one of: boolean, string, number, object/],
      [{ key: 'bad', type: 'string', default_value: 'a', rules: [{ conditions: [], variants: [{ name: 'a', weight: 50, value: 'x' }, { name: 'b', weight: 40, value: 'y' }] }] }, 'rules[0].variants weights must sum to 100 (they sum to 90)'],
      [{ key: 'bad', type: 'string', default_value: 'a', fallthrough: { variants: [{ name: 'a', weight: 100, value: 3 }] } }, 'fallthrough.variants[0].value must be a string (the flag is of type string)'],
      [{ key: 'bad', type: 'string', default_value: 'a', rules: [{ conditions: [], value: 'x', variants: [{ name: 'a', weight: 100, value: 'x' }] }] }, 'rules[0] must have either value or variants, not both'],
    ]
    for (const [body, message] of cases) assertJsonError(await post(flagsUrl(), body, { key: t.apiKey }), 400, message)
    assertJsonError(await get(`${flagsUrl()}/bad`, { key: t.apiKey }), 404)
    // An update is checked against the stored type, and changes nothing when refused.
    assertJsonError(await call('PUT', `${flagsUrl()}/max-items`, { json: { default_value: 'many' }, key: t.apiKey }), 400, 'default_value must be a number (the flag is of type number)')
    assertJsonError(await call('PUT', `${flagsUrl()}/max-items`, { json: { type: 'string' }, key: t.apiKey }), 400, 'type cannot be changed')
    const kept = await get(`${flagsUrl()}/max-items`, { key: t.apiKey })
    assert.equal(kept.json.default_value, 10)
    assert.equal(kept.json.type, 'number')
  })

  it('a seed flag (no type) keeps its exact shape and string values', async () => {
    const c = await post(flagsUrl(), { key: 'seed', enabled: true, default_value: 'false', rules: [{ conditions: [{ attribute: 'c', operator: 'in', value: ['DE'] }], value: 'true' }] }, { key: t.apiKey })
    assert.equal(c.status, 201)
    assert.deepEqual(Object.keys(c.json), ['key', 'name', 'enabled', 'default_value', 'rules', 'version', 'created_at', 'updated_at'])
    const r = await post(`${base}/api/v1/evaluate`, { sdk_key: t.sdkKey, flags: ['seed'], context: { c: 'DE' } })
    assert.equal(r.text, '{"flags":{"seed":{"value":"true","reason":"TARGETING_MATCH","rule_index":0}}}')
  })
})
