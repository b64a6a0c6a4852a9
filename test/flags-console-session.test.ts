// Console sessions of the flags service: an API key exchanged for an HttpOnly SameSite=Strict
// cookie and a CSRF token; the management API taken with the cookie (CSRF required to change
// anything); the session stored hashed, without the key; sign-out; expiry; a rotated API key
// ends its sessions with the documented message; bad input; tenant isolation; a per-IP limit on
// sign-ins; the endpoints in /openapi.json.
import assert from 'node:assert/strict'
import { sha256 } from '../src/platform/ids.ts'
import { clock } from '../src/platform/clock.ts'
import { SESSION_CREATES_PER_MINUTE } from '../src/platform/http/console-session-routes.ts'
import { assertJsonError, call, get, post } from './helpers/http.ts'
import { flagsAccount } from './helpers/flags.ts'
import { freshIp, signIn, withSession } from './helpers/console-session.ts'
import { startSystem, type TestSystem } from './helpers/system.ts'

const REVOKED = 'Your session ended: the API key was revoked'

describe('flags console: sessions', () => {
  let sys: TestSystem
  let root: string
  const sessions = () => sys.platform.db.collection('console_sessions')

  before(async () => {
    sys = await startSystem({ services: ['flags'], workers: false, env: { TRUST_PROXY: 'true' } })
    root = sys.root.flags!
  })
  after(async () => {
    clock.reset()
    await sys?.stop()
  })
  afterEach(() => clock.reset())

  it('exchanges an API key for an HttpOnly SameSite=Strict cookie and a CSRF token; stores neither the key nor the id', async () => {
    const t = await flagsAccount(sys)
    const s = await signIn(root, t.apiKey)
    assert.equal(s.res.json.account.id, t.accountId)
    assert.match(s.res.json.account.email, /@example\.com$/)
    assert.equal(s.res.json.account.plan, 'free')
    assert.match(s.csrf, /^[0-9A-Za-z]{32}$/)
    assert.equal(s.res.headers.get('cache-control'), 'no-store')
    const cookie = s.res.headers.get('set-cookie')!
    assert.match(cookie, /^qw_console_flags=[0-9A-Za-z]{32}; Path=\/; Max-Age=43200; HttpOnly; SameSite=Strict$/)
    const id = s.cookie.split('=')[1]!
    const doc = await sessions().findOne({ _id: sha256(id) as never })
    assert.ok(doc, 'stored under the hash of the id')
    assert.equal(doc.account_id, t.accountId)
    const stored = JSON.stringify(doc)
    assert.ok(!stored.includes(t.apiKey) && !stored.includes(id), 'neither the key nor the session id in clear')
    assert.equal(doc.key_hint, `${t.apiKey.slice(0, 7)}…`)

    const again = await withSession(s, 'GET', `${root}/api/v1/console/session`)
    assert.equal(again.status, 200, again.text)
    assert.equal(again.json.csrf_token, s.csrf)
    assert.equal(again.json.account.id, t.accountId)
  })

  it('marks the cookie Secure when the request came over https (behind a trusted proxy)', async () => {
    const t = await flagsAccount(sys)
    const s = await signIn(root, t.apiKey, { 'x-forwarded-proto': 'https' })
    assert.match(s.res.headers.get('set-cookie')!, /; Secure$/)
  })

  it('serves the management API with the cookie; changes need the CSRF token, reads do not; Bearer keys work as before', async () => {
    const t = await flagsAccount(sys)
    const s = await signIn(root, t.apiKey)
    const list = await withSession(s, 'GET', `${root}/api/v1/projects`, { csrf: false })
    assert.equal(list.status, 200, list.text)
    assert.equal(list.json.projects[0].id, t.projectId)

    assertJsonError(await withSession(s, 'POST', `${t.project}/flags`, { json: { key: 'a' }, csrf: false }), 403, 'Missing or invalid CSRF token')
    assertJsonError(await withSession(s, 'POST', `${t.project}/flags`, { json: { key: 'a' }, csrf: 'x'.repeat(32) }), 403, 'Missing or invalid CSRF token')
    assertJsonError(await withSession(s, 'POST', `${t.project}/flags`, { json: { key: 'a' }, csrf: '' }), 403, 'Missing or invalid CSRF token')
    assertJsonError(await withSession(s, 'PUT', `${t.project}/flags/a`, { json: { enabled: true }, csrf: false }), 403)
    assertJsonError(await withSession(s, 'PATCH', `${t.project}`, { json: { name: 'x' }, csrf: false }), 403)
    assertJsonError(await withSession(s, 'DELETE', `${t.project}/flags/a`, { csrf: false }), 403)
    assert.equal((await get(`${t.project}/flags`, { key: t.apiKey })).json.flags.length, 0, 'nothing was created')

    const created = await withSession(s, 'POST', `${t.project}/flags`, { json: { key: 'a' } })
    assert.equal(created.status, 201, created.text)
    // The audit trail names the key the session was made with, by its hint.
    const hist = await get(`${t.project}/flags/a/history`, { key: t.apiKey })
    assert.equal(hist.json.history[0].actor.api_key.hint, `${t.apiKey.slice(0, 7)}…`)
    assert.equal((await post(`${t.project}/flags`, { key: 'b' }, { key: t.apiKey })).status, 201)
    // A Bearer key is used when both are present (no CSRF needed: a page cannot set that header cross-site).
    const both = await call('POST', `${t.project}/flags`, { json: { key: 'c' }, key: t.apiKey, headers: { cookie: s.cookie } })
    assert.equal(both.status, 201, both.text)
  })

  it("keeps accounts apart: a session cannot see or touch another account's project (404)", async () => {
    const a = await flagsAccount(sys)
    const b = await flagsAccount(sys)
    const s = await signIn(root, a.apiKey)
    assertJsonError(await withSession(s, 'GET', `${b.project}`), 404, 'Project not found')
    assertJsonError(await withSession(s, 'GET', `${b.project}/flags`), 404, 'Project not found')
    assertJsonError(await withSession(s, 'POST', `${b.project}/flags`, { json: { key: 'x' } }), 404, 'Project not found')
    assert.equal((await get(`${b.project}/flags`, { key: b.apiKey })).json.flags.length, 0)
  })

  it('refuses bad sign-in input with a 4xx JSON error and creates no session', async () => {
    const before = await sessions().countDocuments()
    const url = `${root}/api/v1/console/session`
    const h = () => ({ 'x-forwarded-for': freshIp() })
    assertJsonError(await call('POST', url, { json: {}, headers: h() }), 400, 'api_key is required')
    assertJsonError(await call('POST', url, { json: { api_key: 42 }, headers: h() }), 400, 'api_key must be a string')
    assertJsonError(await call('POST', url, { json: { api_key: '' }, headers: h() }), 400, 'api_key must not be empty')
    assertJsonError(await call('POST', url, { json: { api_key: 'fb_' + 'a'.repeat(5000) }, headers: h() }), 400, 'api_key must be at most 200 characters')
    assertJsonError(await call('POST', url, { json: { api_key: 'fb_x', extra: 1 }, headers: h() }), 400, /unknown field/)
    assertJsonError(await call('POST', url, { json: ['fb_x'], headers: h() }), 400)
    assertJsonError(await call('POST', url, { raw: '{"api_key": "fb_', headers: h() }), 400, 'Malformed JSON body')
    assertJsonError(await call('POST', url, { raw: '', headers: h() }), 400)
    assertJsonError(await call('POST', url, { json: { api_key: 'fb_ключ🔑' }, headers: h() }), 401, 'Unauthorized: invalid or missing API key')
    assertJsonError(await call('POST', url, { json: { api_key: 'fb_' + 'A'.repeat(40) }, headers: h() }), 401, 'Unauthorized: invalid or missing API key')
    assertJsonError(await call('POST', url, { json: { api_key: 'dm_' + 'A'.repeat(40) }, headers: h() }), 401)
    // A cross-site form can send only these types: never a sign-in, even with a good key (no login CSRF).
    const t = await flagsAccount(sys)
    for (const type of ['application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'text/plain']) {
      const r = await call('POST', url, { raw: `api_key=${encodeURIComponent(t.apiKey)}`, headers: { ...h(), 'content-type': type } })
      assert.ok(r.status === 415 || r.status === 400, `${type}: ${r.status}`)
      assert.equal(typeof r.json.error, 'string')
    }
    assert.equal(await sessions().countDocuments(), before)
    for (const r of await Promise.all([call('POST', url, { json: {}, headers: h() }), call('POST', url, { json: { api_key: 'x' }, headers: h() })])) {
      assert.equal(r.headers.get('set-cookie'), null)
    }
  })

  it('answers 401 "Not signed in" without a live session, and clears a dead cookie', async () => {
    const url = `${root}/api/v1/console/session`
    assertJsonError(await get(url), 401, 'Not signed in')
    for (const cookie of ['qw_console_flags=nope', `qw_console_flags=${'A'.repeat(32)}`, 'qw_console_flags=', 'other=1']) {
      const r = await call('GET', url, { headers: { cookie } })
      assertJsonError(r, 401, 'Not signed in')
    }
    const r = await call('GET', `${root}/api/v1/projects`, { headers: { cookie: `qw_console_flags=${'A'.repeat(32)}` } })
    assertJsonError(r, 401, 'Not signed in')
    assert.match(r.headers.get('set-cookie') ?? '', /^qw_console_flags=; Path=\/; Max-Age=0/)
  })

  it('signs out: CSRF required, then the session is gone and the cookie cleared', async () => {
    const t = await flagsAccount(sys)
    const s = await signIn(root, t.apiKey)
    const url = `${root}/api/v1/console/session`
    assertJsonError(await withSession(s, 'DELETE', url, { csrf: false }), 403, 'Missing or invalid CSRF token')
    assert.equal((await withSession(s, 'GET', url)).status, 200, 'still signed in')
    const out = await withSession(s, 'DELETE', url)
    assert.equal(out.status, 204)
    assert.match(out.headers.get('set-cookie') ?? '', /^qw_console_flags=; Path=\/; Max-Age=0/)
    assertJsonError(await withSession(s, 'GET', url), 401, 'Not signed in')
    assertJsonError(await withSession(s, 'GET', `${t.project}`), 401, 'Not signed in')
    // Signing out twice, or without a cookie, is fine.
    assert.equal((await withSession(s, 'DELETE', url)).status, 204)
    assert.equal((await call('DELETE', url)).status, 204)
  })

  it('ends a session after 12 hours', async () => {
    const t = await flagsAccount(sys)
    const s = await signIn(root, t.apiKey)
    clock.advance(12 * 3600 * 1000 - 60_000)
    assert.equal((await withSession(s, 'GET', `${t.project}`)).status, 200)
    clock.advance(61_000)
    assertJsonError(await withSession(s, 'GET', `${t.project}`), 401, 'Not signed in')
  })

  it('a rotated API key ends the sessions made with it, with the documented message; the new key signs in', async () => {
    const t = await flagsAccount(sys)
    const s1 = await signIn(root, t.apiKey)
    const s2 = await signIn(root, t.apiKey)
    const rotated = await withSession(s1, 'POST', `${root}/api/v1/account/key/rotate`)
    assert.equal(rotated.status, 200, rotated.text)
    const fresh = rotated.json.api_key as string
    assert.match(fresh, /^fb_[0-9A-Za-z]{40}$/)
    assert.notEqual(fresh, t.apiKey)

    const r = await withSession(s2, 'GET', `${t.project}/flags`)
    assertJsonError(r, 401, REVOKED)
    assert.match(r.headers.get('set-cookie') ?? '', /^qw_console_flags=; Path=\/; Max-Age=0/)
    assertJsonError(await withSession(s1, 'GET', `${root}/api/v1/console/session`), 401, REVOKED)
    assertJsonError(await get(`${t.project}/flags`, { key: t.apiKey }), 401)
    assert.equal((await get(`${t.project}/flags`, { key: fresh })).status, 200)
    const s3 = await signIn(root, fresh)
    assert.equal((await withSession(s3, 'GET', `${t.project}/flags`)).status, 200)
    assertJsonError(await call('POST', `${root}/api/v1/console/session`, { json: { api_key: t.apiKey }, headers: { 'x-forwarded-for': freshIp() } }), 401)
    // Rotating needs a key or a session with its CSRF token.
    assertJsonError(await call('POST', `${root}/api/v1/account/key/rotate`), 401)
    assertJsonError(await withSession(s3, 'POST', `${root}/api/v1/account/key/rotate`, { csrf: false }), 403)
    assert.equal((await get(`${t.project}/flags`, { key: fresh })).status, 200, 'the refused rotation changed nothing')
  })

  it(`limits sign-ins to ${SESSION_CREATES_PER_MINUTE} a minute per client address`, async () => {
    const t = await flagsAccount(sys)
    const ip = '203.0.113.77'
    const url = `${root}/api/v1/console/session`
    for (let i = 0; i < SESSION_CREATES_PER_MINUTE; i++) {
      const r = await call('POST', url, { json: { api_key: i % 2 ? t.apiKey : 'fb_wrong' }, headers: { 'x-forwarded-for': ip } })
      assert.equal(r.status, i % 2 ? 200 : 401)
    }
    const refused = await call('POST', url, { json: { api_key: t.apiKey }, headers: { 'x-forwarded-for': ip } })
    assertJsonError(refused, 429, /Too many sign-in attempts/)
    assert.ok(Number(refused.headers.get('retry-after')) > 0)
    assert.equal(refused.headers.get('set-cookie'), null)
    assert.equal((await call('POST', url, { json: { api_key: t.apiKey }, headers: { 'x-forwarded-for': '203.0.113.78' } })).status, 200)
  })

  it('documents the session endpoints in /openapi.json', async () => {
    const spec = (await get(`${root}/openapi.json`)).json
    const s = spec.paths['/api/v1/console/session']
    assert.ok(s.post && s.get && s.delete)
    assert.deepEqual(s.post.requestBody.content['application/json'].schema.required, ['api_key'])
    assert.ok(s.post.responses['429'] && s.get.responses['401'])
    assert.ok(spec.paths['/api/v1/account/key/rotate'].post)
  })
})
