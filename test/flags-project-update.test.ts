// PATCH (and PUT) /api/v1/projects/{id}: a partial update of a project's own settings (name,
// allowed_origins), with origins normalised to what browsers send; bad input is a 400 naming the
// field and changes nothing; another account's project is a 404. POST /api/v1/projects takes
// allowed_origins too. (What the origins do: flags-cors.test.ts.)
import assert from 'node:assert/strict'
import { startSystem, type TestSystem } from './helpers/system.ts'
import { assertJsonError, call, get, post } from './helpers/http.ts'

describe('flags API: updating a project (PATCH /api/v1/projects/{id})', () => {
  let sys: TestSystem
  let api: string
  let n = 0

  async function signup() {
    const r = await post(`${api}/signup`, { email: `proj${++n}@example.com` })
    assert.equal(r.status, 201, r.text)
    return { apiKey: r.json.api_key as string, projectId: r.json.project.id as string }
  }
  const patch = (id: string, json: unknown, key: string) => call('PATCH', `${api}/projects/${id}`, { json, key })
  const read = async (id: string, key: string) => (await get(`${api}/projects/${id}`, { key })).json

  before(async () => {
    sys = await startSystem({ services: ['flags'], workers: false })
    api = `${sys.url.flags}/api/v1`
  })
  after(async () => sys?.stop())

  it('a new project allows any origin; signup and lists show allowed_origins', async () => {
    const r = await post(`${api}/signup`, { email: 'origins@example.com' })
    assert.deepEqual(r.json.project.allowed_origins, ['*'])
    const list = await get(`${api}/projects`, { key: r.json.api_key })
    assert.deepEqual(list.json.projects[0].allowed_origins, ['*'])
  })

  it('sets allowed_origins (normalised, duplicates dropped) and the name, each alone', async () => {
    const t = await signup()
    const r = await patch(t.projectId, { allowed_origins: ['https://App.Example.com/', 'https://app.example.com:443', 'http://localhost:5173', 'capacitor://localhost'] }, t.apiKey)
    assert.equal(r.status, 200, r.text)
    assert.deepEqual(r.json.allowed_origins, ['https://app.example.com', 'http://localhost:5173', 'capacitor://localhost'])
    assert.equal(r.json.name, 'Default')
    assert.equal(r.json.id, t.projectId)
    assert.equal(r.json.sdk_key, undefined)
    const renamed = await patch(t.projectId, { name: ' Web shop ' }, t.apiKey)
    assert.equal(renamed.status, 200, renamed.text)
    assert.equal(renamed.json.name, 'Web shop')
    assert.deepEqual(renamed.json.allowed_origins, ['https://app.example.com', 'http://localhost:5173', 'capacitor://localhost'])
    assert.deepEqual(await read(t.projectId, t.apiKey), renamed.json)
  })

  it('PUT does the same partial update', async () => {
    const t = await signup()
    const r = await call('PUT', `${api}/projects/${t.projectId}`, { json: { allowed_origins: [] }, key: t.apiKey })
    assert.equal(r.status, 200, r.text)
    assert.deepEqual(r.json.allowed_origins, [])
    assert.equal(r.json.name, 'Default')
  })

  it('POST /projects takes allowed_origins', async () => {
    const t = await signup()
    const r = await post(`${api}/projects`, { name: 'App', allowed_origins: ['https://shop.example.com'] }, { key: t.apiKey })
    assert.equal(r.status, 201, r.text)
    assert.deepEqual(r.json.allowed_origins, ['https://shop.example.com'])
    assertJsonError(await post(`${api}/projects`, { name: 'Bad', allowed_origins: ['shop.example.com'] }, { key: t.apiKey }), 400, /^allowed_origins\[0\] must be an origin/)
  })

  it('bad input: 400 naming the field, and nothing changes', async () => {
    const t = await signup()
    const before = await read(t.projectId, t.apiKey)
    const cases: [unknown, RegExp][] = [
      [{ allowed_origins: ['https://a.example.com', 'https://a.example.com/login'] }, /^allowed_origins\[1\] must be an origin such as https:\/\/app\.example\.com/],
      [{ allowed_origins: ['https://*.example.com'] }, /^allowed_origins\[0\] must be an origin/],
      [{ allowed_origins: ['example.com'] }, /^allowed_origins\[0\] must be an origin/],
      [{ allowed_origins: ['https://a.example.com?x=1'] }, /^allowed_origins\[0\] must be an origin/],
      [{ allowed_origins: ['*', 'https://a.example.com'] }, /^allowed_origins: "\*" \(any origin\) cannot be combined/],
      [{ allowed_origins: 'https://a.example.com' }, /^allowed_origins must be an array/],
      [{ allowed_origins: [42] }, /^allowed_origins\[0\] must be a string$/],
      [{ allowed_origins: Array.from({ length: 101 }, (_, i) => `https://a${i}.example.com`) }, /^allowed_origins must have at most 100 items$/],
      [{ name: '' }, /^name must not be empty$/],
      [{}, /^body must contain at least one of: name, allowed_origins$/],
      [{ sdk_key_hint: 'x' }, /^body has unknown field: sdk_key_hint$/],
    ]
    for (const [body, message] of cases) assertJsonError(await patch(t.projectId, body, t.apiKey), 400, message, { exact: true })
    assertJsonError(await call('PATCH', `${api}/projects/${t.projectId}`, { raw: '{"name":', key: t.apiKey }), 400, 'Malformed JSON body')
    assert.deepEqual(await read(t.projectId, t.apiKey), before)
  })

  it("401 without a key; another account's or an unknown project is a 404 and stays unchanged", async () => {
    const a = await signup()
    const b = await signup()
    assertJsonError(await call('PATCH', `${api}/projects/${a.projectId}`, { json: { name: 'x' } }), 401)
    assertJsonError(await patch(a.projectId, { allowed_origins: [] }, b.apiKey), 404, 'Project not found')
    assertJsonError(await patch('nope', { name: 'x' }, a.apiKey), 404, 'Project not found')
    assertJsonError(await patch('x'.repeat(100), { name: 'x' }, a.apiKey), 404, 'Project not found')
    assert.deepEqual((await read(a.projectId, a.apiKey)).allowed_origins, ['*'])
    assert.equal((await read(a.projectId, a.apiKey)).name, 'Default')
  })
})
