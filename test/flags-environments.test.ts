// Environments over HTTP: each has its own SDK key; a flag's definition is shared while its enabled
// state, rules and default are per environment (`?environment=`); the seed's key and endpoints act
// on production; plan limit; rotating an environment's key; a project document written before
// environments existed keeps working as production.
import assert from 'node:assert/strict'
import { assertJsonError, call, get, post } from './helpers/http.ts'
import { startSystem, type TestSystem } from './helpers/system.ts'

describe('flags: environments', () => {
  let sys: TestSystem
  let base: string

  before(async () => {
    sys = await startSystem({ services: ['flags'], workers: false })
    base = sys.url.flags
  })
  after(async () => {
    await sys?.stop()
  })

  const evaluate = async (sdkKey: string, flag: string, context: Record<string, unknown> = {}) => {
    const r = await post(`${base}/api/v1/evaluate`, { sdk_key: sdkKey, flags: [flag], context })
    assert.equal(r.status, 200, r.text)
    return r.json.flags[flag]
  }

  it('per-environment state and SDK keys; production is the seed behaviour', async () => {
    const s = await post(`${base}/api/v1/signup`, { email: 'env@example.com' })
    const apiKey = s.json.api_key
    const prodKey = s.json.sdk_key
    const P = s.json.project.id
    const flags = `${base}/api/v1/projects/${P}/flags`
    const envs = await get(`${base}/api/v1/projects/${P}/environments`, { key: apiKey })
    assert.deepEqual(envs.json.environments.map((e: { name: string }) => e.name), ['production'])

    const st = await post(`${base}/api/v1/projects/${P}/environments`, { name: 'staging' }, { key: apiKey })
    assert.equal(st.status, 201, st.text)
    const stagingKey = st.json.sdk_key
    assert.match(stagingKey, /^fbsdk_/)
    assertJsonError(await post(`${base}/api/v1/projects/${P}/environments`, { name: 'staging' }, { key: apiKey }), 409)
    assertJsonError(await post(`${base}/api/v1/projects/${P}/environments`, { name: 'Bad Name' }, { key: apiKey }), 400, /^name must be 1-32 characters/)
    const over = await post(`${base}/api/v1/projects/${P}/environments`, { name: 'development' }, { key: apiKey })
    assertJsonError(over, 403, 'Plan limit reached: the free plan allows 2 environments per project')
    assert.equal(over.json.limit, 'environments_per_project')

    // Created as in the seed: production's state; staging starts off.
    const c = await post(flags, { key: 'checkout', enabled: true, default_value: 'false', rules: [{ conditions: [{ attribute: 'country', operator: 'eq', value: 'DE' }], value: 'true' }] }, { key: apiKey })
    assert.equal(c.status, 201, c.text)
    assert.equal(c.json.environment, undefined)
    assert.deepEqual(await evaluate(prodKey, 'checkout', { country: 'DE' }), { value: 'true', reason: 'TARGETING_MATCH', rule_index: 0 })
    assert.deepEqual(await evaluate(stagingKey, 'checkout', { country: 'DE' }), { value: 'false', reason: 'DISABLED', rule_index: null })

    // Staging gets its own rules; production is unchanged.
    const u = await call('PUT', `${flags}/checkout?environment=staging`, { json: { enabled: true, default_value: 'true', rules: [] }, key: apiKey })
    assert.equal(u.status, 200, u.text)
    assert.equal(u.json.environment, 'staging')
    assert.deepEqual(u.json.rules, [])
    await eventuallyEqual(async () => (await evaluate(stagingKey, 'checkout', { country: 'FR' })).value, 'true')
    assert.deepEqual(await evaluate(prodKey, 'checkout', { country: 'FR' }), { value: 'false', reason: 'DEFAULT', rule_index: null })
    assert.equal((await get(`${flags}/checkout`, { key: apiKey })).json.rules.length, 1)
    assert.equal((await get(`${flags}/checkout?environment=staging`, { key: apiKey })).json.enabled, true)
    // The definition is shared: a rename shows in every environment.
    assert.equal((await call('PUT', `${flags}/checkout`, { json: { name: 'Checkout v2' }, key: apiKey })).status, 200)
    assert.equal((await get(`${flags}/checkout?environment=staging`, { key: apiKey })).json.name, 'Checkout v2')
    assert.equal((await get(`${flags}/checkout?environment=staging`, { key: apiKey })).json.default_value, 'true')
    // A second change of staging's state (it exists now) keeps the fields it does not name.
    const u2 = await call('PUT', `${flags}/checkout?environment=staging`, { json: { rules: [{ conditions: [{ attribute: 'country', operator: 'eq', value: 'FR' }], value: 'false' }] }, key: apiKey })
    assert.equal(u2.status, 200, u2.text)
    assert.equal(u2.json.enabled, true)
    await eventuallyEqual(async () => (await evaluate(stagingKey, 'checkout', { country: 'FR' })).value, 'false')
    assert.equal((await call('PUT', `${flags}/checkout?environment=staging`, { json: { rules: [] }, key: apiKey })).status, 200)
    await eventuallyEqual(async () => (await evaluate(stagingKey, 'checkout', { country: 'FR' })).value, 'true')
    assertJsonError(await get(`${flags}/checkout?environment=qa`, { key: apiKey }), 404, 'Environment not found')

    // A flag created in staging is off in production.
    assert.equal((await post(`${flags}?environment=staging`, { key: 'only-staging', enabled: true }, { key: apiKey })).status, 201)
    await eventuallyEqual(async () => (await evaluate(stagingKey, 'only-staging')).reason, 'DEFAULT')
    assert.equal((await evaluate(prodKey, 'only-staging')).reason, 'DISABLED')

    // OFREP picks the environment from the key.
    const o = await call('POST', `${base}/ofrep/v1/evaluate/flags/checkout`, { json: { context: { country: 'FR' } }, key: stagingKey })
    assert.equal(o.json.value, true)

    // Rotating staging's key retires the old one and leaves production's alone.
    const rot = await post(`${base}/api/v1/projects/${P}/environments/staging/sdk-key/rotate`, {}, { key: apiKey })
    assert.equal(rot.status, 200, rot.text)
    assertJsonError(await post(`${base}/api/v1/evaluate`, { sdk_key: stagingKey, flags: ['checkout'] }), 401)
    assert.equal((await evaluate(rot.json.sdk_key, 'checkout', { country: 'FR' })).value, 'true')
    assert.equal((await evaluate(prodKey, 'checkout', { country: 'FR' })).value, 'false')
  })

  it('a project and flag stored before environments existed act as production', async () => {
    const s = await post(`${base}/api/v1/signup`, { email: 'old-env@example.com' })
    const P = s.json.project.id
    assert.equal((await post(`${base}/api/v1/projects/${P}/flags`, { key: 'legacy', enabled: true }, { key: s.json.api_key })).status, 201)
    // As today's code wrote them: no environments fields at all.
    await sys.platform.db.collection('flag_projects').updateOne({ _id: P }, { $unset: { environments: '', segment_count: '' }, $inc: { version: 1 } })
    await sys.platform.db.collection('flags').updateOne({ project_id: P, key: 'legacy' }, { $unset: { environments: '' } })
    await eventuallyEqual(async () => (await evaluate(s.json.sdk_key, 'legacy')).value, 'true')
    const envs = await get(`${base}/api/v1/projects/${P}/environments`, { key: s.json.api_key })
    assert.deepEqual(envs.json.environments.map((e: { name: string }) => e.name), ['production'])
  })
})

async function eventuallyEqual(read: () => Promise<unknown>, want: unknown, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs
  for (;;) {
    const got = await read()
    if (got === want) return
    if (Date.now() > end) assert.equal(got, want)
    await new Promise((r) => setTimeout(r, 20))
  }
}
