// Optimistic concurrency of a project's settings (name, allowed_origins): GET answers an ETag,
// PATCH/PUT with If-Match apply only on that version, else 412 with the project as it is; what
// moves the version (its settings) and what does not (flags, keys, environments); without If-Match
// as before; malformed If-Match a 400 that changes nothing; two replicas on one database.
import assert from 'node:assert/strict'
import { assertJsonError, call, get, post } from './helpers/http.ts'
import { flagsAccount, type FlagsAccount } from './helpers/flags.ts'
import { startSystem, type TestSystem } from './helpers/system.ts'

describe('flags: project versions, ETag and If-Match', () => {
  let sys: TestSystem
  let sys2: TestSystem

  before(async () => {
    sys = await startSystem({ services: ['flags'], workers: false })
    // A second replica on the same database and queues: the version lives in the store, not in a replica.
    sys2 = await startSystem({ services: ['flags'], workers: false, env: { MONGO_DB: sys.env.MONGO_DB!, QUEUE_PREFIX: sys.env.QUEUE_PREFIX! } })
  })
  after(async () => {
    await sys2?.stop()
    await sys?.stop()
  })

  const write = (method: 'PATCH' | 'PUT', url: string, json: unknown, key: string, ifMatch?: string) =>
    call(method, url, { json, key, headers: ifMatch === undefined ? {} : { 'if-match': ifMatch } })
  const on2 = (t: FlagsAccount) => t.project.replace(sys.url.flags, sys2.url.flags)
  const settingsEntries = async (t: FlagsAccount) => (await get(`${t.project}/history?kind=project`, { key: t.apiKey })).json.history.length

  it('answers the project with its version and ETag; If-Match on it applies, a stale one is a 412 with the project as it is', async () => {
    const t = await flagsAccount(sys)
    const got = await get(t.project, { key: t.apiKey })
    assert.equal(got.status, 200)
    assert.equal(got.json.version, 1)
    assert.equal(got.headers.get('etag'), '"1"')
    const listed = await get(`${sys.url.flags}/api/v1/projects`, { key: t.apiKey })
    assert.equal(listed.json.projects[0].version, 1, 'the list carries the version too (the console renames from it)')

    const renamed = await write('PATCH', t.project, { name: 'Shop' }, t.apiKey, '"1"')
    assert.equal(renamed.status, 200, renamed.text)
    assert.equal(renamed.json.version, 2)
    assert.equal(renamed.headers.get('etag'), '"2"')

    const entries = await settingsEntries(t)
    const stale = await write('PATCH', t.project, { allowed_origins: ['https://mine.example'] }, t.apiKey, '"1"')
    assertJsonError(stale, 412, 'The project was changed by someone else (version 2 is current)')
    assert.equal(stale.headers.get('etag'), '"2"')
    const now = await get(t.project, { key: t.apiKey })
    assert.deepEqual(stale.json.current, now.json, '412 carries the project as GET answers it')
    assert.deepEqual(now.json.allowed_origins, ['*'], 'the stale write was not applied')
    assert.equal(now.json.name, 'Shop')
    assert.equal(await settingsEntries(t), entries, 'and nothing was recorded')

    // PUT is the same; a list of tags and * match as HTTP says.
    assertJsonError(await write('PUT', t.project, { name: 'Old' }, t.apiKey, '"1"'), 412)
    assert.equal((await write('PUT', t.project, { name: 'Shop 2' }, t.apiKey, '"1", "2"')).json.version, 3)
    assert.equal((await write('PATCH', t.project, { name: 'Shop 3' }, t.apiKey, '*')).json.version, 4)
  })

  it('the version covers name and allowed origins only: flags, keys, environments and webhooks leave it', async () => {
    const t = await flagsAccount(sys)
    const version = async () => (await get(t.project, { key: t.apiKey })).json.version
    assert.equal(await version(), 1)
    assert.equal((await post(`${t.project}/flags`, { key: 'f' }, { key: t.apiKey })).status, 201)
    assert.equal((await call('PUT', `${t.project}/flags/f`, { json: { enabled: true }, key: t.apiKey })).status, 200)
    assert.equal((await post(`${t.project}/sdk-key/rotate`, {}, { key: t.apiKey })).status, 200)
    assert.equal((await post(`${t.project}/environments`, { name: 'staging' }, { key: t.apiKey })).status, 201)
    assert.equal((await call('PATCH', `${t.project}/environments/staging`, { json: { name: 'qa' }, key: t.apiKey })).status, 200)
    assert.equal((await post(`${t.project}/segments`, { name: 's', conditions: [{ attribute: 'a', operator: 'eq', value: 'b' }] }, { key: t.apiKey })).status, 201)
    assert.equal((await post(`${t.project}/webhooks`, { url: 'http://127.0.0.1:9/hook' }, { key: t.apiKey })).status, 201)
    assert.equal(await version(), 1)
    // So a rename made on the version read before all that still applies.
    const r = await write('PATCH', t.project, { name: 'Still mine' }, t.apiKey, '"1"')
    assert.equal(r.status, 200, r.text)
    assert.equal(r.json.version, 2)
    assert.equal(r.json.flag_count, 1)
  })

  it('without If-Match writes apply as before; a malformed If-Match is a 400 that changes nothing; not yours is a 404', async () => {
    const t = await flagsAccount(sys)
    const plain = await write('PATCH', t.project, { name: 'No condition' }, t.apiKey)
    assert.equal(plain.status, 200, plain.text)
    assert.equal(plain.json.version, 2)
    assert.equal((await write('PUT', t.project, { allowed_origins: [] }, t.apiKey)).json.version, 3)

    for (const bad of ['2', 'W/"3"', '"x"', '"3",', `"${'9'.repeat(16)}"`]) {
      assertJsonError(await write('PATCH', t.project, { name: 'Bad' }, t.apiKey, bad), 400, 'If-Match must be "*" or the ETag of the version you edited, such as "3"')
    }
    const now = await get(t.project, { key: t.apiKey })
    assert.equal(now.json.name, 'No condition')
    assert.equal(now.json.version, 3)

    const other = await flagsAccount(sys)
    assertJsonError(await write('PATCH', t.project, { name: 'Theirs' }, other.apiKey, '"3"'), 404, 'Project not found')
    assertJsonError(await write('PATCH', t.project, { name: 'Theirs' }, other.apiKey, '*'), 404, 'Project not found')
    assertJsonError(await get(t.project, { key: other.apiKey }), 404, 'Project not found')
    assert.equal((await get(t.project, { key: t.apiKey })).json.name, 'No condition')
  })

  it('two replicas: a write on either moves the version both answer; of two writes on the same version sent at once, one applies and one is a 412', async () => {
    const t = await flagsAccount(sys)
    const r1 = await write('PATCH', t.project, { allowed_origins: ['https://a.example'] }, t.apiKey, '"1"')
    assert.equal(r1.status, 200, r1.text)
    const seen2 = await get(on2(t), { key: t.apiKey })
    assert.equal(seen2.headers.get('etag'), '"2"')
    assertJsonError(await write('PATCH', on2(t), { allowed_origins: ['https://b.example'] }, t.apiKey, '"1"'), 412, 'The project was changed by someone else (version 2 is current)')

    const both = await Promise.all([
      write('PATCH', t.project, { allowed_origins: ['https://one.example'] }, t.apiKey, '"2"'),
      write('PATCH', on2(t), { allowed_origins: ['https://two.example'] }, t.apiKey, '"2"'),
    ])
    assert.deepEqual(both.map((r) => r.status).sort(), [200, 412])
    const winner = both.find((r) => r.status === 200)!
    const loser = both.find((r) => r.status === 412)!
    assert.equal(loser.json.current.version, 3)
    assert.deepEqual(loser.json.current.allowed_origins, winner.json.allowed_origins)
    const final = await get(t.project, { key: t.apiKey })
    assert.deepEqual(final.json.allowed_origins, winner.json.allowed_origins)
    assert.equal(final.json.version, 3)
  })

  it('a project stored before settings versions is at version 0 until its first change', async () => {
    const t = await flagsAccount(sys)
    await sys.platform.db.collection('flag_projects').updateOne({ _id: t.projectId } as never, { $unset: { settings_version: '' } })
    const got = await get(t.project, { key: t.apiKey })
    assert.equal(got.json.version, 0)
    assert.equal(got.headers.get('etag'), '"0"')
    assertJsonError(await write('PATCH', t.project, { name: 'x' }, t.apiKey, '"1"'), 412, /version 0 is current/)
    const r = await write('PATCH', t.project, { name: 'Upgraded' }, t.apiKey, '"0"')
    assert.equal(r.status, 200, r.text)
    assert.equal(r.json.version, 1)
  })

  it('/openapi.json describes If-Match and the 412 on PATCH and PUT, and the ETag of GET', async () => {
    const doc = (await get(`${sys.root.flags}/openapi.json`)).json
    const path = doc.paths['/api/v1/projects/{id}']
    for (const m of ['patch', 'put']) {
      assert.ok(path[m].parameters.some((p: any) => p.name === 'If-Match' && p.in === 'header'), m)
      assert.ok(path[m].responses['412'], m)
    }
    assert.ok(path.get.responses['200'].headers.ETag)
  })
})
