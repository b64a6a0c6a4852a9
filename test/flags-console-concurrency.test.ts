// Optimistic concurrency of flags and segments (ETag / If-Match → 412 with the current version),
// and flag tags: a write on a stale copy is never applied over another change, also when two
// land at once; writes without If-Match behave as before; malformed If-Match is a 400 that
// changes nothing; older documents without a version; the console's session path; OpenAPI.
import assert from 'node:assert/strict'
import { assertJsonError, call, get, post } from './helpers/http.ts'
import { flagsAccount, type FlagsAccount } from './helpers/flags.ts'
import { signIn, withSession } from './helpers/console-session.ts'
import { startSystem, type TestSystem } from './helpers/system.ts'

describe('flags console: versions, If-Match and tags', () => {
  let sys: TestSystem

  before(async () => {
    sys = await startSystem({ services: ['flags'], workers: false, env: { TRUST_PROXY: 'true' } })
  })
  after(async () => {
    await sys?.stop()
  })

  const put = (url: string, json: unknown, key: string, ifMatch?: string) => call('PUT', url, { json, key, headers: ifMatch === undefined ? {} : { 'if-match': ifMatch } })
  const del = (url: string, key: string, ifMatch?: string) => call('DELETE', url, { key, headers: ifMatch === undefined ? {} : { 'if-match': ifMatch } })
  const historyCount = async (t: FlagsAccount, key: string) => (await get(`${t.project}/flags/${key}/history`, { key: t.apiKey })).json.history.length

  it('answers each flag with its version and ETag; If-Match on the current version applies, on a stale one is a 412 with the flag as it is', async () => {
    const t = await flagsAccount(sys)
    const created = await post(`${t.project}/flags`, { key: 'checkout', type: 'boolean', default_value: false }, { key: t.apiKey })
    assert.equal(created.status, 201)
    assert.equal(created.json.version, 1)
    assert.equal(created.headers.get('etag'), '"1"')
    const got = await get(`${t.project}/flags/checkout`, { key: t.apiKey })
    assert.equal(got.headers.get('etag'), '"1"')
    assert.equal(got.json.version, 1)

    const first = await put(`${t.project}/flags/checkout`, { enabled: true }, t.apiKey, '"1"')
    assert.equal(first.status, 200, first.text)
    assert.equal(first.json.version, 2)
    assert.equal(first.headers.get('etag'), '"2"')

    const entries = await historyCount(t, 'checkout')
    const stale = await put(`${t.project}/flags/checkout`, { enabled: false, name: 'Stale' }, t.apiKey, '"1"')
    assertJsonError(stale, 412, 'The flag was changed by someone else (version 2 is current)')
    assert.equal(stale.headers.get('etag'), '"2"')
    const now = await get(`${t.project}/flags/checkout`, { key: t.apiKey })
    assert.deepEqual(stale.json.current, now.json)
    assert.equal(now.json.enabled, true, 'the stale write was not applied')
    assert.equal(now.json.name, 'checkout')
    assert.equal(await historyCount(t, 'checkout'), entries, 'and nothing was recorded')

    // Without If-Match: applied as before. A list of tags, and *, match as HTTP says.
    assert.equal((await put(`${t.project}/flags/checkout`, { name: 'Checkout' }, t.apiKey)).json.version, 3)
    assert.equal((await put(`${t.project}/flags/checkout`, { enabled: false }, t.apiKey, '"1", "3"')).json.version, 4)
    assert.equal((await put(`${t.project}/flags/checkout`, { enabled: true }, t.apiKey, '*')).json.version, 5)
  })

  it('a change in another environment moves the version too; the 412 shows the environment asked for', async () => {
    const t = await flagsAccount(sys)
    assert.equal((await post(`${t.project}/environments`, { name: 'staging' }, { key: t.apiKey })).status, 201)
    await post(`${t.project}/flags`, { key: 'f', default_value: 'a', type: 'string' }, { key: t.apiKey })
    const staged = await put(`${t.project}/flags/f?environment=staging`, { enabled: true }, t.apiKey, '"1"')
    assert.equal(staged.status, 200, staged.text)
    assert.equal(staged.json.version, 2)
    const stale = await put(`${t.project}/flags/f?environment=staging`, { default_value: 'b' }, t.apiKey, '"1"')
    assertJsonError(stale, 412, /version 2 is current/)
    assert.equal(stale.json.current.environment, 'staging')
    assert.equal(stale.json.current.enabled, true)
    // Renaming the environment rewrites the flag's states: its version moves.
    assert.equal((await call('PATCH', `${t.project}/environments/staging`, { json: { name: 'stage' }, key: t.apiKey })).status, 200)
    assert.ok((await get(`${t.project}/flags/f`, { key: t.apiKey })).json.version > 2)
  })

  it('of two writes made on the same version at once, exactly one is applied', async () => {
    const t = await flagsAccount(sys)
    await post(`${t.project}/flags`, { key: 'race', default_value: 0, type: 'number' }, { key: t.apiKey })
    for (let round = 0; round < 5; round++) {
      const v = (await get(`${t.project}/flags/race`, { key: t.apiKey })).json.version
      const answers = await Promise.all([1, 2, 3].map((n) => put(`${t.project}/flags/race`, { default_value: round * 10 + n }, t.apiKey, `"${v}"`)))
      assert.deepEqual(answers.map((a) => a.status).sort(), [200, 412, 412], answers.map((a) => a.text).join('\n'))
      const winner = answers.find((a) => a.status === 200)!
      const now = (await get(`${t.project}/flags/race`, { key: t.apiKey })).json
      assert.equal(now.version, v + 1)
      assert.equal(now.default_value, winner.json.default_value)
    }
  })

  it('DELETE with If-Match: stale → 412 and the flag stays; current → 204; then 404', async () => {
    const t = await flagsAccount(sys)
    await post(`${t.project}/flags`, { key: 'gone' }, { key: t.apiKey })
    await put(`${t.project}/flags/gone`, { enabled: true }, t.apiKey)
    const stale = await del(`${t.project}/flags/gone`, t.apiKey, '"1"')
    assertJsonError(stale, 412, 'The flag was changed by someone else (version 2 is current)')
    assert.equal(stale.json.current.key, 'gone')
    assert.equal((await get(`${t.project}/flags/gone`, { key: t.apiKey })).status, 200)
    assert.equal((await del(`${t.project}/flags/gone`, t.apiKey, '"2"')).status, 204)
    assertJsonError(await put(`${t.project}/flags/gone`, { enabled: true }, t.apiKey, '"2"'), 404, 'Flag not found')
    assertJsonError(await del(`${t.project}/flags/gone`, t.apiKey, '"2"'), 404, 'Flag not found')
  })

  it('a malformed If-Match is a 400 that changes nothing', async () => {
    const t = await flagsAccount(sys)
    await post(`${t.project}/flags`, { key: 'm' }, { key: t.apiKey })
    for (const h of ['1', 'W/"1"', '"one"', '"1', '"1",', '"-1"', `"${'9'.repeat(30)}"`, `${'"1", '.repeat(400)}"1"`]) {
      assertJsonError(await put(`${t.project}/flags/m`, { enabled: true }, t.apiKey, h), 400, /^If-Match must be/)
      assertJsonError(await del(`${t.project}/flags/m`, t.apiKey, h), 400, /^If-Match must be/)
    }
    const now = (await get(`${t.project}/flags/m`, { key: t.apiKey })).json
    assert.equal(now.version, 1)
    assert.equal(now.enabled, false)
  })

  it('a flag stored before versions existed is at version 0, and moves to 1 on its first change', async () => {
    const t = await flagsAccount(sys)
    await post(`${t.project}/flags`, { key: 'old' }, { key: t.apiKey })
    await sys.platform.db.collection('flags').updateOne({ project_id: t.projectId, key: 'old' }, { $unset: { version: '' } })
    const got = await get(`${t.project}/flags/old`, { key: t.apiKey })
    assert.equal(got.headers.get('etag'), '"0"')
    assert.equal(got.json.version, 0)
    assert.equal((await put(`${t.project}/flags/old`, { enabled: true }, t.apiKey, '"0"')).json.version, 1)
    assertJsonError(await put(`${t.project}/flags/old`, { enabled: false }, t.apiKey, '"0"'), 412, /version 1 is current/)
  })

  it('segments: version and ETag, If-Match on PUT and DELETE, 412 with the current segment', async () => {
    const t = await flagsAccount(sys)
    const conditions = [{ attribute: 'country', operator: 'eq', value: 'DE' }]
    const created = await post(`${t.project}/segments`, { name: 'de', conditions }, { key: t.apiKey })
    assert.equal(created.status, 201, created.text)
    assert.equal(created.headers.get('etag'), '"1"')
    assert.equal((await get(`${t.project}/segments/de`, { key: t.apiKey })).json.version, 1)
    const ok = await put(`${t.project}/segments/de`, { description: 'Germany' }, t.apiKey, '"1"')
    assert.equal(ok.status, 200, ok.text)
    assert.equal(ok.headers.get('etag'), '"2"')
    const stale = await put(`${t.project}/segments/de`, { description: 'stale' }, t.apiKey, '"1"')
    assertJsonError(stale, 412, 'The segment was changed by someone else (version 2 is current)')
    assert.equal(stale.json.current.description, 'Germany')
    assertJsonError(await put(`${t.project}/segments/de`, { description: 'x' }, t.apiKey, 'nope'), 400, /^If-Match must be/)
    assertJsonError(await del(`${t.project}/segments/de`, t.apiKey, '"1"'), 412)
    assert.equal((await get(`${t.project}/segments/de`, { key: t.apiKey })).json.description, 'Germany')
    const answers = await Promise.all(['a', 'b'].map((d) => put(`${t.project}/segments/de`, { description: d }, t.apiKey, '"2"')))
    assert.deepEqual(answers.map((a) => a.status).sort(), [200, 412])
    assert.equal((await del(`${t.project}/segments/de`, t.apiKey, '"3"')).status, 204)
    assertJsonError(await put(`${t.project}/segments/de`, { description: 'x' }, t.apiKey, '"3"'), 404, 'Segment not found')
  })

  it('If-Match works the same through a console session (with the CSRF token)', async () => {
    const t = await flagsAccount(sys)
    const s = await signIn(sys.root.flags!, t.apiKey)
    await post(`${t.project}/flags`, { key: 'c' }, { key: t.apiKey })
    const ok = await withSession(s, 'PUT', `${t.project}/flags/c`, { json: { enabled: true }, headers: { 'if-match': '"1"' } })
    assert.equal(ok.status, 200, ok.text)
    assertJsonError(await withSession(s, 'PUT', `${t.project}/flags/c`, { json: { enabled: false }, headers: { 'if-match': '"1"' } }), 412)
  })

  it("keeps another account's flags apart: If-Match on them is a 404, never a 412 that would show them", async () => {
    const a = await flagsAccount(sys)
    const b = await flagsAccount(sys)
    await post(`${b.project}/flags`, { key: 'secret' }, { key: b.apiKey })
    const r = await put(`${b.project}/flags/secret`, { enabled: true }, a.apiKey, '"7"')
    assertJsonError(r, 404, 'Project not found')
    assert.equal(r.json.current, undefined)
    assertJsonError(await del(`${b.project}/flags/secret`, a.apiKey, '"7"'), 404, 'Project not found')
  })

  it('flags carry tags (shown once set): set, deduplicated, changed, shown in the list and in history; bad tags are a 400', async () => {
    const t = await flagsAccount(sys)
    const created = await post(`${t.project}/flags`, { key: 'tagged', tags: ['checkout', 'team:growth', 'checkout'] }, { key: t.apiKey })
    assert.equal(created.status, 201, created.text)
    assert.deepEqual(created.json.tags, ['checkout', 'team:growth'])
    await post(`${t.project}/flags`, { key: 'plain' }, { key: t.apiKey })
    const list = (await get(`${t.project}/flags`, { key: t.apiKey })).json.flags
    assert.deepEqual(Object.fromEntries(list.map((f: any) => [f.key, f.tags])), { plain: undefined, tagged: ['checkout', 'team:growth'] })
    const changed = await put(`${t.project}/flags/tagged`, { tags: ['ü', 'x'] }, t.apiKey)
    assertJsonError(changed, 400, /^tags\[0\] must be 1-40 characters/)
    for (const tags of ['checkout', [1], [''], ['a b'], ['x'.repeat(41)], Array.from({ length: 21 }, (_, i) => `t${i}`)]) {
      assertJsonError(await put(`${t.project}/flags/tagged`, { tags }, t.apiKey), 400, /^tags/)
    }
    assert.equal((await put(`${t.project}/flags/tagged`, { tags: ['billing'] }, t.apiKey)).json.version, 2)
    const h = (await get(`${t.project}/flags/tagged/history`, { key: t.apiKey })).json.history[0]
    assert.deepEqual(h.after.tags, ['billing'])
    assert.deepEqual(h.before.tags, ['checkout', 'team:growth'])
  })

  it('documents If-Match, 412 and ETag in /openapi.json', async () => {
    const spec = (await get(`${sys.root.flags}/openapi.json`)).json
    for (const [path, method] of [['/api/v1/projects/{id}/flags/{key}', 'put'], ['/api/v1/projects/{id}/flags/{key}', 'delete'], ['/api/v1/projects/{id}/segments/{name}', 'put'], ['/api/v1/projects/{id}/segments/{name}', 'delete']] as const) {
      const op = spec.paths[path][method]
      assert.ok(op.parameters.some((p: any) => p.name === 'If-Match' && p.in === 'header'), `${method} ${path}`)
      assert.ok(op.responses['412'], `${method} ${path}`)
    }
    assert.ok(spec.paths['/api/v1/projects/{id}/flags/{key}'].get.responses['200'].headers.ETag)
    assert.ok(spec.paths['/api/v1/projects/{id}/flags'].post.requestBody.content['application/json'].schema.properties.tags)
  })
})
