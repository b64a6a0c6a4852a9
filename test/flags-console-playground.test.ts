// The playground (POST /api/v1/projects/{id}/playground): one request evaluates a context against
// the flags in every environment side by side, naming the rule that matched and showing it as
// stored; subsets of flags and environments; unknown flags and environments; bad input is a 4xx
// JSON error; tenant isolation; the console's cookie session; OpenAPI.
import assert from 'node:assert/strict'
import { assertJsonError, call, get, post } from './helpers/http.ts'
import { flagsAccount, type FlagsAccount } from './helpers/flags.ts'
import { signIn, withSession } from './helpers/console-session.ts'
import { startSystem, type TestSystem } from './helpers/system.ts'

describe('flags console: playground', () => {
  let sys: TestSystem
  let t: FlagsAccount

  before(async () => {
    sys = await startSystem({ services: ['flags'], workers: false, env: { TRUST_PROXY: 'true' } })
    t = await flagsAccount(sys, 'pro')
    const ok = (r: { status: number; text: string }, status = 201) => assert.equal(r.status, status, r.text)
    ok(await post(`${t.project}/environments`, { name: 'staging' }, { key: t.apiKey }))
    ok(await post(`${t.project}/segments`, { name: 'beta', conditions: [{ attribute: 'plan', operator: 'in', value: ['beta', 'pro'] }] }, { key: t.apiKey }))
    ok(
      await post(
        `${t.project}/flags`,
        {
          key: 'checkout',
          type: 'string',
          enabled: true,
          default_value: 'old',
          rules: [
            { conditions: [{ attribute: 'country', operator: 'eq', value: 'DE' }], value: 'german' },
            { conditions: [{ attribute: 'version', operator: 'semver_gte', value: '2.0.0' }], segments: ['beta'], value: 'new' },
            { conditions: [], variants: [{ name: 'a', weight: 50, value: 'split-a' }, { name: 'b', weight: 50, value: 'split-b' }], stickiness: 'userId' },
          ],
        },
        { key: t.apiKey },
      ),
    )
    // In staging the flag is on with one rule of its own.
    ok(await call('PUT', `${t.project}/flags/checkout?environment=staging`, { json: { enabled: true, rules: [{ conditions: [{ attribute: 'email', operator: 'ends_with', value: '@example.com' }], value: 'staff' }] }, key: t.apiKey }), 200)
    ok(await post(`${t.project}/flags`, { key: 'dark-mode', type: 'boolean', default_value: false }, { key: t.apiKey }))
    ok(await post(`${t.project}/flags`, { key: '__proto__', type: 'number', enabled: true, default_value: 7 }, { key: t.apiKey }))
  })
  after(async () => {
    await sys?.stop()
  })

  const play = (body: unknown, key = t.apiKey, url = `${t.project}/playground`) => call('POST', url, { json: body, key })

  it('answers every flag in every environment, with the reason and the rule that matched as stored', async () => {
    const r = await play({ context: { country: 'DE', email: 'ann@example.com', userId: 'u1' } })
    assert.equal(r.status, 200, r.text)
    assert.deepEqual(Object.keys(r.json.environments), ['production', 'staging'])
    const prod = r.json.environments.production
    const staging = r.json.environments.staging
    assert.deepEqual(Object.keys(prod).sort(), ['__proto__', 'checkout', 'dark-mode'])
    assert.deepEqual(prod.checkout, { value: 'german', variant: null, reason: 'TARGETING_MATCH', rule_index: 0, rule: { conditions: [{ attribute: 'country', operator: 'eq', value: 'DE' }], value: 'german' } })
    assert.deepEqual(staging.checkout, { value: 'staff', variant: null, reason: 'TARGETING_MATCH', rule_index: 0, rule: { conditions: [{ attribute: 'email', operator: 'ends_with', value: '@example.com' }], value: 'staff' } })
    assert.deepEqual(prod['dark-mode'], { value: false, variant: null, reason: 'DISABLED', rule_index: null, rule: null })
    assert.equal(prod.__proto__.value, 7)
    assert.equal(prod.__proto__.reason, 'DEFAULT')
    // The same answer as the SDK endpoint gives for that environment.
    const sdk = await post(`${sys.url.flags}/api/v1/evaluate`, { sdk_key: t.sdkKey, flags: ['checkout'], context: { country: 'DE' } })
    assert.equal(sdk.json.flags.checkout.value, 'german')
  })

  it('names segment rules and weighted splits: the variant and the rule (without its buckets)', async () => {
    const seg = await play({ context: { version: '2.1.0', plan: 'beta', userId: 'u1' }, environments: ['production'], flags: ['checkout'] })
    assert.equal(seg.status, 200, seg.text)
    assert.deepEqual(Object.keys(seg.json.environments), ['production'])
    const c = seg.json.environments.production.checkout
    assert.equal(c.value, 'new')
    assert.equal(c.rule_index, 1)
    assert.deepEqual(c.rule.segments, ['beta'])

    const split = (await play({ context: { userId: 'user-42' }, environments: ['production'], flags: ['checkout'] })).json.environments.production.checkout
    assert.equal(split.rule_index, 2)
    assert.ok(['a', 'b'].includes(split.variant))
    assert.equal(split.value, `split-${split.variant}`)
    assert.deepEqual(split.rule.variants.map((v: any) => Object.keys(v).sort()), [['name', 'value', 'weight'], ['name', 'value', 'weight']])
    // Sticky: the same user gets the same variant again.
    const again = (await play({ context: { userId: 'user-42' }, environments: ['production'], flags: ['checkout'] })).json.environments.production.checkout
    assert.equal(again.variant, split.variant)
  })

  it('answers an unknown flag as FLAG_NOT_FOUND; an unknown environment is a 404', async () => {
    const r = await play({ context: {}, flags: ['nope', 'dark-mode', 'nope'], environments: ['staging'] })
    assert.equal(r.status, 200, r.text)
    assert.deepEqual(r.json.environments.staging.nope, { value: null, variant: null, reason: 'FLAG_NOT_FOUND', rule_index: null, rule: null, error: 'FLAG_NOT_FOUND' })
    assert.deepEqual(Object.keys(r.json.environments.staging), ['nope', 'dark-mode'])
    assertJsonError(await play({ context: {}, environments: ['staging', 'qa'] }), 404, /^Environment not found: environments\[1\] \("qa"\)/)
  })

  it('refuses bad input with a 4xx JSON error', async () => {
    const url = `${t.project}/playground`
    const cases: [unknown, RegExp][] = [
      [{}, /^context is required$/],
      [{ context: 'DE' }, /^context must be an object$/],
      [{ context: [] }, /^context must be an object$/],
      [{ context: { a: { nested: 1 } } }, /context\.a must be a string, number, boolean or null/],
      [{ context: { a: 'x'.repeat(3000) } }, /at most 2048 characters/],
      [{ context: Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`k${i}`, i])) }, /at most 100 attributes/],
      [{ context: {}, flags: 'checkout' }, /^flags must be an array$/],
      [{ context: {}, flags: [] }, /^flags must have at least 1 item$/],
      [{ context: {}, flags: [1] }, /^flags\[0\] must be a string$/],
      [{ context: {}, flags: Array.from({ length: 1001 }, (_, i) => `f${i}`) }, /^flags must have at most 1000 items$/],
      [{ context: {}, environments: ['x'.repeat(65)] }, /^environments\[0\] must be at most 64 characters$/],
      [{ context: {}, extra: true }, /unknown field/],
    ]
    for (const [body, message] of cases) assertJsonError(await play(body), 400, message)
    assertJsonError(await call('POST', url, { raw: '{"context": {', key: t.apiKey }), 400, 'Malformed JSON body')
    assertJsonError(await call('POST', url, { raw: '', key: t.apiKey }), 400)
    assertJsonError(await call('POST', url, { raw: 'context=1', key: t.apiKey, headers: { 'content-type': 'text/plain' } }), 415)
    // Unicode is data like any other.
    const uni = await play({ context: { country: 'DÉ', name: 'Zoë 🙂' }, flags: ['checkout'], environments: ['production'] })
    assert.equal(uni.status, 200, uni.text)
  })

  it("keeps accounts apart, and takes the console's session cookie (with its CSRF token)", async () => {
    const other = await flagsAccount(sys)
    assertJsonError(await play({ context: {} }, other.apiKey), 404, 'Project not found')
    assertJsonError(await play({ context: {} }, 'fb_nope'), 401)
    const s = await signIn(sys.root.flags!, t.apiKey)
    const r = await withSession(s, 'POST', `${t.project}/playground`, { json: { context: { country: 'DE' } } })
    assert.equal(r.status, 200, r.text)
    assert.equal(r.json.environments.production.checkout.value, 'german')
    assertJsonError(await withSession(s, 'POST', `${t.project}/playground`, { json: { context: {} }, csrf: false }), 403)
  })

  it('is documented in /openapi.json', async () => {
    const op = (await get(`${sys.root.flags}/openapi.json`)).json.paths['/api/v1/projects/{id}/playground'].post
    assert.deepEqual(op.requestBody.content['application/json'].schema.required, ['context'])
    assert.ok(op.responses['200'].content['application/json'].schema.properties.environments)
  })
})
