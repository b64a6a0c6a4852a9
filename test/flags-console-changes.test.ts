// The rest of the console's API: revert a flag to a history entry (a new change, If-Match
// honoured, refusals), revoke a server SDK key (it stops working; recorded), and
// `last_evaluated_at` on the flag list (per environment, from the SDKs' usage counts).
import assert from 'node:assert/strict'
import { assertJsonError, call, get, post } from './helpers/http.ts'
import { flagsAccount, type FlagsAccount } from './helpers/flags.ts'
import { signIn, withSession } from './helpers/console-session.ts'
import { startSystem, type TestSystem } from './helpers/system.ts'

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
async function until<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 15_000): Promise<T> {
  const started = Date.now()
  for (;;) {
    const v = await check()
    if (v !== undefined) return v
    if (Date.now() - started > timeoutMs) throw new Error(`${what}: not within ${timeoutMs} ms`)
    await sleep(50)
  }
}

describe('flags console: revert, key revocation, last evaluated', () => {
  let sys: TestSystem

  before(async () => {
    sys = await startSystem({ services: ['flags'], workers: false, env: { TRUST_PROXY: 'true', FLAGS_USAGE_FLUSH_MS: '200' } })
  })
  after(async () => {
    await sys?.stop()
  })

  const put = (url: string, json: unknown, key: string, headers: Record<string, string> = {}) => call('PUT', url, { json, key, headers })
  const historyOf = async (t: FlagsAccount, key: string) => (await get(`${t.project}/flags/${key}/history`, { key: t.apiKey })).json.history as any[]
  const revert = (t: FlagsAccount, key: string, entry: string, headers: Record<string, string> = {}, apiKey = t.apiKey) =>
    call('POST', `${t.project}/flags/${key}/history/${entry}/revert`, { key: apiKey, headers })

  it('reverts a flag to its state after an entry, in every environment, as a new recorded change', async () => {
    const t = await flagsAccount(sys, 'pro')
    assert.equal((await post(`${t.project}/environments`, { name: 'staging' }, { key: t.apiKey })).status, 201)
    const rules = [{ conditions: [{ attribute: 'country', operator: 'eq', value: 'DE' }], variants: [{ name: 'a', weight: 30, value: 'A' }, { name: 'b', weight: 70, value: 'B' }] }]
    assert.equal((await post(`${t.project}/flags`, { key: 'f', type: 'string', default_value: 'x', rules, tags: ['one'] }, { key: t.apiKey })).status, 201)
    assert.equal((await put(`${t.project}/flags/f?environment=staging`, { enabled: true, default_value: 'stage' }, t.apiKey)).status, 200)
    const good = (await historyOf(t, 'f'))[0]
    const goodState = (await get(`${t.project}/flags/f`, { key: t.apiKey })).json
    const goodStaging = (await get(`${t.project}/flags/f?environment=staging`, { key: t.apiKey })).json
    // Then a bad change in both environments, name and tags.
    assert.equal((await put(`${t.project}/flags/f`, { enabled: true, rules: [], name: 'Broken', tags: ['two'] }, t.apiKey)).status, 200)
    assert.equal((await put(`${t.project}/flags/f?environment=staging`, { enabled: false }, t.apiKey)).status, 200)
    const before = await historyOf(t, 'f')

    const r = await revert(t, 'f', good.id)
    assert.equal(r.status, 200, r.text)
    assert.equal(r.headers.get('etag'), `"${r.json.version}"`)
    const { version: _v1, updated_at: _u1, ...want } = goodState
    const { version: _v2, updated_at: _u2, ...got } = r.json
    assert.deepEqual(got, want)
    assert.ok(r.json.version > goodState.version)
    const staging = (await get(`${t.project}/flags/f?environment=staging`, { key: t.apiKey })).json
    assert.equal(staging.enabled, goodStaging.enabled)
    assert.equal(staging.default_value, 'stage')
    const after = await historyOf(t, 'f')
    assert.equal(after.length, before.length + 1)
    assert.equal(after[0].type, 'flag.updated')
    assert.deepEqual(after[0].after, good.after, 'the new entry reads as the state reverted to')
    // What the SDKs get changed back too.
    const ev = await post(`${sys.url.flags}/api/v1/evaluate`, { sdk_key: t.sdkKey, flags: ['f'], context: { country: 'FR' } })
    assert.equal(ev.json.flags.f.value, 'x')
  })

  it('honours If-Match (412 with the current flag, nothing changed) and takes the console session', async () => {
    const t = await flagsAccount(sys)
    await post(`${t.project}/flags`, { key: 'g', type: 'boolean' }, { key: t.apiKey })
    const created = (await historyOf(t, 'g'))[0]
    await put(`${t.project}/flags/g`, { enabled: true }, t.apiKey)
    const stale = await revert(t, 'g', created.id, { 'if-match': '"1"' })
    assertJsonError(stale, 412, 'The flag was changed by someone else (version 2 is current)')
    assert.equal(stale.json.current.enabled, true)
    assert.equal((await get(`${t.project}/flags/g`, { key: t.apiKey })).json.enabled, true)
    assertJsonError(await revert(t, 'g', created.id, { 'if-match': 'x' }), 400, /^If-Match must be/)
    const s = await signIn(sys.root.flags!, t.apiKey)
    assertJsonError(await withSession(s, 'POST', `${t.project}/flags/g/history/${created.id}/revert`, { csrf: false }), 403)
    const ok = await withSession(s, 'POST', `${t.project}/flags/g/history/${created.id}/revert`, { headers: { 'if-match': '"2"' } })
    assert.equal(ok.status, 200, ok.text)
    assert.equal(ok.json.enabled, false)
    assert.equal(ok.json.version, 3)
  })

  it('refuses: unknown entries, entries of other flags or projects, a deleting entry, a deleted flag, a segment gone since', async () => {
    const t = await flagsAccount(sys, 'pro')
    const other = await flagsAccount(sys)
    await post(`${t.project}/flags`, { key: 'h' }, { key: t.apiKey })
    await post(`${t.project}/flags`, { key: 'k' }, { key: t.apiKey })
    const hEntry = (await historyOf(t, 'h'))[0]
    assertJsonError(await revert(t, 'h', 'nope'), 404, 'History entry not found')
    assertJsonError(await revert(t, 'h', 'x'.repeat(65)), 400)
    assertJsonError(await revert(t, 'k', hEntry.id), 404, 'History entry not found')
    assertJsonError(await revert(other, 'h', hEntry.id), 404, 'History entry not found')
    assertJsonError(await revert(t, 'h', hEntry.id, {}, other.apiKey), 404, 'Project not found')

    await post(`${t.project}/segments`, { name: 'beta', conditions: [{ attribute: 'plan', operator: 'eq', value: 'beta' }] }, { key: t.apiKey })
    await put(`${t.project}/flags/h`, { rules: [{ conditions: [], segments: ['beta'], value: 'true' }] }, t.apiKey)
    const withSegment = (await historyOf(t, 'h'))[0]
    await put(`${t.project}/flags/h`, { rules: [] }, t.apiKey)
    assert.equal((await call('DELETE', `${t.project}/segments/beta`, { key: t.apiKey })).status, 204)
    assertJsonError(await revert(t, 'h', withSegment.id), 409, /segment "beta", which no longer exists/)

    assert.equal((await call('DELETE', `${t.project}/flags/k`, { key: t.apiKey })).status, 204)
    const [deletion, kCreated] = await historyOf(t, 'k')
    assertJsonError(await revert(t, 'k', deletion.id), 409, /deleted the flag/)
    assertJsonError(await revert(t, 'k', kCreated.id), 404, 'Flag not found')
  })

  it('revokes a server SDK key: it stops working, the revocation is recorded, revoking again is a no-op', async () => {
    const t = await flagsAccount(sys)
    const made = await post(`${t.project}/environments/production/server-key/rotate`, undefined, { key: t.apiKey })
    assert.equal(made.status, 200, made.text)
    const serverKey = made.json.server_key as string
    const flagSet = () => call('GET', `${sys.url.flags}/api/v1/flag-set`, { key: serverKey })
    assert.equal((await flagSet()).status, 200)
    const r = await call('DELETE', `${t.project}/environments/production/server-key`, { key: t.apiKey })
    assert.equal(r.status, 204, r.text)
    await until('the revoked key refused', async () => ((await flagSet()).status === 401 ? true : undefined))
    const envs = (await get(`${t.project}/environments`, { key: t.apiKey })).json.environments
    assert.equal(envs[0].server_key_hint, null)
    const feed = (await get(`${t.project}/history?kind=sdk_key`, { key: t.apiKey })).json.history
    assert.equal(feed[0].type, 'sdk_key.revoked')
    assert.equal((await get(`${t.project}/history?type=sdk_key.revoked`, { key: t.apiKey })).json.history.length, 1)
    assert.equal((await call('DELETE', `${t.project}/environments/production/server-key`, { key: t.apiKey })).status, 204)
    assert.equal((await get(`${t.project}/history?kind=sdk_key`, { key: t.apiKey })).json.history.length, feed.length, 'nothing more recorded')
    assertJsonError(await call('DELETE', `${t.project}/environments/nope/server-key`, { key: t.apiKey }), 404, 'Environment not found')
    const other = await flagsAccount(sys)
    assertJsonError(await call('DELETE', `${t.project}/environments/production/server-key`, { key: other.apiKey }), 404, 'Project not found')
  })

  it('deletes a project and everything in it: its keys stop working, its slot is given back; others cannot', async () => {
    const t = await flagsAccount(sys)
    const other = await flagsAccount(sys)
    await post(`${t.project}/flags`, { key: 'doomed', enabled: true }, { key: t.apiKey })
    await post(`${t.project}/segments`, { name: 's', conditions: [{ attribute: 'a', operator: 'eq', value: 'b' }] }, { key: t.apiKey })
    await post(`${t.project}/webhooks`, { url: 'https://example.com/hook' }, { key: t.apiKey })
    const evaluate = () => post(`${sys.url.flags}/api/v1/evaluate`, { sdk_key: t.sdkKey, flags: ['doomed'] })
    assert.equal((await evaluate()).status, 200)
    // A second project fills the free plan's two.
    assert.equal((await post(`${sys.url.flags}/api/v1/projects`, { name: 'Second' }, { key: t.apiKey })).status, 201)
    assertJsonError(await post(`${sys.url.flags}/api/v1/projects`, { name: 'Third' }, { key: t.apiKey }), 403)

    assertJsonError(await call('DELETE', t.project, { key: other.apiKey }), 404, 'Project not found')
    assert.equal((await get(t.project, { key: t.apiKey })).status, 200, 'still there')
    const s = await signIn(sys.root.flags!, t.apiKey)
    assertJsonError(await withSession(s, 'DELETE', t.project, { csrf: false }), 403)
    assert.equal((await withSession(s, 'DELETE', t.project)).status, 204)

    assertJsonError(await get(t.project, { key: t.apiKey }), 404, 'Project not found')
    assertJsonError(await get(`${t.project}/flags`, { key: t.apiKey }), 404, 'Project not found')
    assertJsonError(await call('DELETE', t.project, { key: t.apiKey }), 404, 'Project not found')
    await until('its SDK key refused', async () => ((await evaluate()).status === 401 ? true : undefined))
    const db = sys.platform.db
    for (const c of ['flags', 'flag_segments', 'flag_webhooks']) assert.equal(await db.collection(c).countDocuments({ project_id: t.projectId }), 0, c)
    assert.equal((await post(`${sys.url.flags}/api/v1/projects`, { name: 'Third' }, { key: t.apiKey })).status, 201, 'the slot was given back')
    assert.equal((await get(`${other.project}/flags`, { key: other.apiKey })).status, 200, 'another account untouched')
    assertJsonError(await call('DELETE', `${sys.url.flags}/api/v1/projects/${'x'.repeat(100)}`, { key: t.apiKey }), 404)
  })

  it('lists when each flag was last evaluated in the environment listed (null: never)', async () => {
    const t = await flagsAccount(sys)
    await post(`${t.project}/flags`, { key: 'used', enabled: true }, { key: t.apiKey })
    await post(`${t.project}/flags`, { key: 'unused' }, { key: t.apiKey })
    const list = async (q = '') => Object.fromEntries((await get(`${t.project}/flags${q}`, { key: t.apiKey })).json.flags.map((f: any) => [f.key, f.last_evaluated_at]))
    assert.deepEqual(await list(), { unused: null, used: null })
    const started = Date.now()
    assert.equal((await post(`${sys.url.flags}/api/v1/evaluate`, { sdk_key: t.sdkKey, flags: ['used'] })).status, 200)
    const seen = await until('usage flushed', async () => (await list()).used ?? undefined)
    assert.ok(Date.parse(seen) >= started - 1_000 && Date.parse(seen) <= Date.now() + 1_000, seen)
    assert.equal((await list()).unused, null)
    await post(`${t.project}/environments`, { name: 'qa' }, { key: t.apiKey })
    assert.deepEqual(await list('?environment=qa'), { unused: null, used: null }, 'per environment')
  })
})
