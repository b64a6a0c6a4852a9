// Renaming and deleting environments over HTTP: a renamed environment keeps its SDK key and flag
// states under the new name; a deleted one's key stops working and its flag states are gone (a new
// environment of the same name starts empty); production cannot be renamed or deleted (409);
// unknown and foreign environments are 404; bad input is a 400 naming the field, nothing changed.
import assert from 'node:assert/strict'
import { setPlan } from '../src/platform/accounts.ts'
import { assertJsonError, call, get, post } from './helpers/http.ts'
import { startSystem, type TestSystem } from './helpers/system.ts'

describe('flags: renaming and deleting environments', () => {
  let sys: TestSystem
  let base: string

  before(async () => {
    sys = await startSystem({ services: ['flags'], workers: false })
    base = sys.url.flags
  })
  after(async () => {
    await sys?.stop()
  })

  /** A free-plan project with a `staging` environment and a flag `checkout` that staging serves "on". */
  async function setup(email: string) {
    const s = await post(`${base}/api/v1/signup`, { email })
    const key = s.json.api_key as string
    const P = s.json.project.id as string
    const envs = `${base}/api/v1/projects/${P}/environments`
    const st = await post(envs, { name: 'staging' }, { key })
    assert.equal(st.status, 201, st.text)
    const flags = `${base}/api/v1/projects/${P}/flags`
    assert.equal((await post(flags, { key: 'checkout', enabled: true, default_value: 'prod' }, { key })).status, 201)
    assert.equal((await call('PUT', `${flags}/checkout?environment=staging`, { json: { enabled: true, default_value: 'on' }, key })).status, 200)
    return { key, P, envs, flags, prodKey: s.json.sdk_key as string, stagingKey: st.json.sdk_key as string }
  }

  const evaluate = (sdkKey: string) => post(`${base}/api/v1/evaluate`, { sdk_key: sdkKey, flags: ['checkout'] })
  const statesOf = async (P: string) => {
    const doc = await sys.platform.db.collection('flags').findOne({ project_id: P, key: 'checkout' })
    return ((doc?.environments ?? []) as { name: string; default_value: unknown }[]).map((e) => `${e.name}=${e.default_value}`)
  }
  const names = async (envs: string, key: string) => (await get(envs, { key })).json.environments.map((e: { name: string }) => e.name)

  it('rename keeps the SDK key and the flag states under the new name', async () => {
    const t = await setup('env-rename@example.com')
    await eventually(async () => (await evaluate(t.stagingKey)).json.flags?.checkout?.value, 'on')
    const r = await call('PATCH', `${t.envs}/staging`, { json: { name: 'qa' }, key: t.key })
    assert.equal(r.status, 200, r.text)
    assert.equal(r.json.name, 'qa')
    assert.match(r.json.sdk_key_hint, /^fbsdk_/)
    assert.equal(r.json.sdk_key, undefined) // the key is not shown again
    assert.deepEqual(await names(t.envs, t.key), ['production', 'qa'])
    assert.deepEqual(await statesOf(t.P), ['qa=on'])
    assert.equal((await get(`${t.flags}/checkout?environment=qa`, { key: t.key })).json.default_value, 'on')
    assertJsonError(await get(`${t.flags}/checkout?environment=staging`, { key: t.key }), 404, 'Environment not found')
    // The same key evaluates the renamed environment, on this replica at once (its cached key was dropped).
    const e = await evaluate(t.stagingKey)
    assert.equal(e.status, 200, e.text)
    assert.equal(e.json.flags.checkout.value, 'on')
    // PUT does the same; renaming to the current name changes nothing.
    assert.equal((await call('PUT', `${t.envs}/qa`, { json: { name: 'qa' }, key: t.key })).status, 200)
    assert.deepEqual(await statesOf(t.P), ['qa=on'])
  })

  it('change webhooks follow their environment: moved along by a rename, gone with a delete (their slots free again)', async () => {
    const t = await setup('env-hooks@example.com')
    const me = await get(`${base}/api/v1/projects`, { key: t.key })
    assert.equal(me.status, 200, me.text)
    const account = await sys.platform.db.collection('accounts').findOne({ email: 'env-hooks@example.com' })
    await setPlan(sys.platform.db, account!._id as unknown as string, 'pro')
    const hooks = `${base}/api/v1/projects/${t.P}/webhooks`
    const made: Record<string, string> = {}
    for (const environment of ['staging', 'production']) {
      const h = await post(hooks, { url: `https://example.com/${environment}`, environment }, { key: t.key })
      assert.equal(h.status, 201, h.text)
      made[environment] = h.json.id
    }
    const list = async () => ((await get(hooks, { key: t.key })).json.webhooks as { id: string; environment: string }[]).map((h) => `${h.id === made.staging ? 'S' : 'P'}:${h.environment}`).sort()
    assert.deepEqual(await list(), ['P:production', 'S:staging'])

    assert.equal((await call('PATCH', `${t.envs}/staging`, { json: { name: 'qa' }, key: t.key })).status, 200)
    assert.deepEqual(await list(), ['P:production', 'S:qa'], 'the staging webhook now listens to qa')
    // The renamed webhook can be edited as any other (its environment exists).
    assert.equal((await call('PATCH', `${hooks}/${made.staging}`, { json: { description: 'after the rename' }, key: t.key })).status, 200)

    assert.equal((await call('DELETE', `${t.envs}/qa`, { key: t.key })).status, 204)
    assert.deepEqual(await list(), ['P:production'], "qa's webhook went with it; production's stays")
    assertJsonError(await get(`${hooks}/${made.staging}`, { key: t.key }), 404)
    const project = await sys.platform.db.collection('flag_projects').findOne({ _id: t.P as never })
    assert.equal(project?.webhook_count, 1, 'the deleted webhook freed its slot')
  })

  it('rename refuses production, taken names, unknown and foreign environments, and bad names; nothing changes', async () => {
    const t = await setup('env-rename-bad@example.com')
    const other = await post(`${base}/api/v1/signup`, { email: 'env-rename-other@example.com' })
    const before = await statesOf(t.P)
    assertJsonError(await call('PATCH', `${t.envs}/production`, { json: { name: 'prod' }, key: t.key }), 409, /^The production environment cannot be renamed or deleted/)
    assertJsonError(await call('PATCH', `${t.envs}/staging`, { json: { name: 'production' }, key: t.key }), 409, 'An environment named "production" already exists in this project')
    assertJsonError(await call('PATCH', `${t.envs}/nope`, { json: { name: 'qa' }, key: t.key }), 404, 'Environment not found')
    assertJsonError(await call('PATCH', `${t.envs}/staging`, { json: { name: 'qa' }, key: other.json.api_key }), 404, 'Project not found')
    assertJsonError(await call('PATCH', `${t.envs}/staging`, { json: { name: 'QA' }, key: t.key }), 400, /^name must be 1-32 characters/)
    assertJsonError(await call('PATCH', `${t.envs}/staging`, { json: { name: 'x'.repeat(10_000) }, key: t.key }), 400, /^name must be 1-32 characters/)
    assertJsonError(await call('PATCH', `${t.envs}/staging`, { json: { name: 'qä' }, key: t.key }), 400, /^name must be 1-32 characters/)
    assertJsonError(await call('PATCH', `${t.envs}/staging`, { json: { name: 7 }, key: t.key }), 400, /^name must be a string/)
    assertJsonError(await call('PATCH', `${t.envs}/staging`, { json: {}, key: t.key }), 400, /^name is required/)
    assertJsonError(await call('PATCH', `${t.envs}/staging`, { json: { name: 'qa', extra: 1 }, key: t.key }), 400, /extra/)
    assertJsonError(await call('PATCH', `${t.envs}/staging`, { raw: '{"name":', key: t.key }), 400)
    assertJsonError(await call('PATCH', `${t.envs}/staging`, { raw: '', key: t.key }), 400)
    assertJsonError(await call('PATCH', `${t.envs}/staging`, { json: { name: 'qa' } }), 401)
    assert.deepEqual(await names(t.envs, t.key), ['production', 'staging'])
    assert.deepEqual(await statesOf(t.P), before)
  })

  it('delete revokes the SDK key and drops the flag states; the slot is free and a new namesake starts empty', async () => {
    const t = await setup('env-delete@example.com')
    await eventually(async () => (await evaluate(t.stagingKey)).json.flags?.checkout?.value, 'on')
    const d = await call('DELETE', `${t.envs}/staging`, { key: t.key })
    assert.equal(d.status, 204, d.text)
    assertJsonError(await evaluate(t.stagingKey), 401)
    assertJsonError(await call('POST', `${base}/ofrep/v1/evaluate/flags/checkout`, { json: { context: {} }, key: t.stagingKey }), 401)
    assert.deepEqual(await statesOf(t.P), [])
    assert.deepEqual(await names(t.envs, t.key), ['production'])
    assertJsonError(await get(`${t.flags}/checkout?environment=staging`, { key: t.key }), 404, 'Environment not found')
    assertJsonError(await call('DELETE', `${t.envs}/staging`, { key: t.key }), 404, 'Environment not found')
    // Production is untouched.
    assert.equal((await evaluate(t.prodKey)).json.flags.checkout.value, 'prod')
    // The free plan's second environment slot is free again; the new staging has its own key and no state.
    const again = await post(t.envs, { name: 'staging' }, { key: t.key })
    assert.equal(again.status, 201, again.text)
    assert.notEqual(again.json.sdk_key, t.stagingKey)
    assert.deepEqual(await evaluate(again.json.sdk_key).then((r) => r.json.flags.checkout), { value: 'false', reason: 'DISABLED', rule_index: null })
  })

  it('delete refuses production (409), unknown and foreign environments (404)', async () => {
    const t = await setup('env-delete-bad@example.com')
    const other = await post(`${base}/api/v1/signup`, { email: 'env-delete-other@example.com' })
    assertJsonError(await call('DELETE', `${t.envs}/production`, { key: t.key }), 409, /^The production environment cannot be renamed or deleted/)
    assertJsonError(await call('DELETE', `${t.envs}/nope`, { key: t.key }), 404, 'Environment not found')
    assertJsonError(await call('DELETE', `${t.envs}/staging`, { key: other.json.api_key }), 404, 'Project not found')
    assertJsonError(await call('DELETE', `${base}/api/v1/projects/nope/environments/staging`, { key: t.key }), 404, 'Project not found')
    assert.deepEqual(await names(t.envs, t.key), ['production', 'staging'])
    assert.equal((await evaluate(t.stagingKey)).status, 200)
  })

  it('flag states left under a name by a step that failed halfway are not inherited by a new environment of that name', async () => {
    const t = await setup('env-orphan@example.com')
    // As a delete that removed the environment but failed before its flag states.
    const states = (await sys.platform.db.collection('flags').findOne({ project_id: t.P, key: 'checkout' }))!.environments
    const orphan = { name: 'qa', enabled: true, default_value: 'orphan', rules: [] }
    await sys.platform.db.collection('flags').updateOne({ project_id: t.P, key: 'checkout' }, { $set: { environments: [...states, orphan] } })
    assert.equal((await call('DELETE', `${t.envs}/staging`, { key: t.key })).status, 204)
    const qa = await post(t.envs, { name: 'qa' }, { key: t.key })
    assert.equal(qa.status, 201, qa.text)
    assert.deepEqual(await statesOf(t.P), [])
    assert.equal((await evaluate(qa.json.sdk_key)).json.flags.checkout.reason, 'DISABLED')
  })
})

async function eventually(read: () => Promise<unknown>, want: unknown, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs
  for (;;) {
    const got = await read()
    if (got === want) return
    if (Date.now() > end) assert.equal(got, want)
    await new Promise((r) => setTimeout(r, 20))
  }
}
