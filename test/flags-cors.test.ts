// CORS of the flags service on the wire: preflights of the evaluation API are granted to any
// origin; actual evaluation answers (hot path, general path, GET, OFREP) are readable only from
// the origins the SDK key's project allows; answers given before the project is known are readable
// from any origin; requests without an Origin get no CORS headers. Management endpoints stay closed
// unless CORS_MANAGEMENT_ORIGINS lists the origin. (The browser itself: flags-ofrep-browser.test.ts.)
import assert from 'node:assert/strict'
import { gzipSync } from 'node:zlib'
import { startSystem, type TestSystem } from './helpers/system.ts'
import { call, get, post, type Res } from './helpers/http.ts'

const APP = 'https://app.example.com'
const OTHER = 'https://evil.example.net'

const acao = (r: Res) => r.headers.get('access-control-allow-origin')
const varies = (r: Res) => (r.headers.get('vary') ?? '').split(',').map((s) => s.trim().toLowerCase()).includes('origin')

function assertGranted(r: Res, origin: string): void {
  assert.equal(acao(r), origin, `status ${r.status}: ${r.text}`)
  assert.ok(varies(r), 'Vary: Origin')
  assert.match(r.headers.get('access-control-expose-headers') ?? '', /\bETag\b/)
  assert.match(r.headers.get('access-control-expose-headers') ?? '', /\bRetry-After\b/)
  assert.equal(r.headers.get('access-control-allow-credentials'), null)
}

function assertRefused(r: Res): void {
  assert.equal(acao(r), null, `status ${r.status}: ${r.text}`)
  assert.equal(r.headers.get('access-control-expose-headers'), null)
  assert.ok(varies(r), 'Vary: Origin')
}

async function signup(base: string, email: string) {
  const r = await post(`${base}/api/v1/signup`, { email })
  assert.equal(r.status, 201, r.text)
  return { apiKey: r.json.api_key as string, sdkKey: r.json.sdk_key as string, projectId: r.json.project.id as string }
}

describe('flags: CORS of the evaluation API', () => {
  let sys: TestSystem
  let base: string
  let open: { apiKey: string; sdkKey: string; projectId: string }
  let closed: { apiKey: string; sdkKey: string; projectId: string }

  const evaluate = (sdkKey: string, origin?: string, body: Record<string, unknown> = {}) =>
    post(`${base}/api/v1/evaluate`, { sdk_key: sdkKey, flags: ['on'], ...body }, { headers: origin ? { origin } : {} })
  const ofrepBulk = (sdkKey: string, origin?: string, headers: Record<string, string> = {}) =>
    call('POST', `${base}/ofrep/v1/evaluate/flags`, { json: { context: { targetingKey: 'u1' } }, key: sdkKey, headers: { ...(origin ? { origin } : {}), ...headers } })

  before(async () => {
    sys = await startSystem({ services: ['flags'], workers: false })
    base = sys.root.flags
    open = await signup(base, 'cors-open@example.com')
    closed = await signup(base, 'cors-closed@example.com')
    for (const t of [open, closed]) {
      const r = await post(`${base}/api/v1/projects/${t.projectId}/flags`, { key: 'on', enabled: true }, { key: t.apiKey })
      assert.equal(r.status, 201, r.text)
    }
    const r = await call('PATCH', `${base}/api/v1/projects/${closed.projectId}`, { json: { allowed_origins: [APP] }, key: closed.apiKey })
    assert.equal(r.status, 200, r.text)
  })
  after(async () => {
    await sys?.stop()
  })

  describe('preflight (no credentials, so no project): granted to any origin', () => {
    const paths: [string, string][] = [
      ['POST', '/api/v1/evaluate'],
      ['GET', '/api/v1/evaluate/on'],
      ['POST', '/ofrep/v1/evaluate/flags'],
      ['POST', '/ofrep/v1/evaluate/flags/on'],
      ['GET', '/ofrep/v1/configuration'],
    ]
    for (const [method, path] of paths) {
      it(`OPTIONS ${path} from another origin: 204 with the methods and headers SDKs send, cached`, async () => {
        const r = await call('OPTIONS', `${base}${path}`, {
          headers: { origin: OTHER, 'access-control-request-method': method, 'access-control-request-headers': 'authorization,content-type,if-none-match' },
        })
        assert.equal(r.status, 204, r.text)
        assert.equal(acao(r), OTHER)
        assert.ok(varies(r))
        assert.ok((r.headers.get('access-control-allow-methods') ?? '').split(/,\s*/).includes(method))
        const allowed = (r.headers.get('access-control-allow-headers') ?? '').toLowerCase().split(/,\s*/)
        for (const h of ['authorization', 'content-type', 'if-none-match', 'x-api-key']) assert.ok(allowed.includes(h), h)
        assert.equal(r.headers.get('access-control-max-age'), '86400')
        assert.equal(r.headers.get('access-control-allow-credentials'), null)
      })
    }

    it('a plain OPTIONS (not a preflight) is answered as before: Allow, no CORS headers', async () => {
      const r = await call('OPTIONS', `${base}/ofrep/v1/evaluate/flags`)
      assert.equal(r.status, 200)
      assert.equal(r.headers.get('allow'), 'POST')
      assert.equal(acao(r), null)
    })
  })

  describe('actual answers: readable from the origins the project allows', () => {
    it('POST /api/v1/evaluate (hot path), project open to any origin: the origin is echoed, ETag exposed', async () => {
      const r = await evaluate(open.sdkKey, OTHER)
      assert.equal(r.status, 200, r.text)
      assert.equal(r.json.flags.on.value, 'true')
      assertGranted(r, OTHER)
    })

    it('without an Origin header: no CORS headers at all (servers and the benchmark pay nothing)', async () => {
      const r = await evaluate(open.sdkKey)
      assert.equal(r.status, 200, r.text)
      assert.equal(acao(r), null)
      assert.equal(r.headers.get('access-control-expose-headers'), null)
      assert.equal(r.headers.get('vary'), null)
    })

    it('POST /api/v1/evaluate, project limited to one origin: that origin is granted, another is not (and is still evaluated)', async () => {
      const ok = await evaluate(closed.sdkKey, APP)
      assert.equal(ok.status, 200, ok.text)
      assertGranted(ok, APP)
      const no = await evaluate(closed.sdkKey, OTHER)
      assert.equal(no.status, 200, no.text)
      assert.equal(no.json.flags.on.value, 'true')
      assertRefused(no)
    })

    it('the general path of POST /api/v1/evaluate (a gzip body) decides the same way', async () => {
      const body = gzipSync(JSON.stringify({ sdk_key: closed.sdkKey, flags: ['on'] }))
      const send = (origin: string) =>
        call('POST', `${base}/api/v1/evaluate`, { raw: body, headers: { origin, 'content-encoding': 'gzip' } })
      const ok = await send(APP)
      assert.equal(ok.status, 200, ok.text)
      assertGranted(ok, APP)
      const no = await send(OTHER)
      assert.equal(no.status, 200, no.text)
      assertRefused(no)
    })

    it('GET /api/v1/evaluate/{key}?sdk_key= (a simple request, no preflight) decides by the project', async () => {
      const send = (origin: string) => get(`${base}/api/v1/evaluate/on?sdk_key=${closed.sdkKey}`, { headers: { origin } })
      const ok = await send(APP)
      assert.equal(ok.status, 200, ok.text)
      assertGranted(ok, APP)
      assertRefused(await send(OTHER))
      // A flag the project does not have: the project is known, so its origins decide the 404 too.
      const missing = await get(`${base}/api/v1/evaluate/nope?sdk_key=${closed.sdkKey}`, { headers: { origin: OTHER } })
      assert.equal(missing.status, 404)
      assertRefused(missing)
    })

    it('OFREP bulk: granted with ETag exposed, also on the 304 of a poll; refused for another origin', async () => {
      const ok = await ofrepBulk(closed.sdkKey, APP)
      assert.equal(ok.status, 200, ok.text)
      assertGranted(ok, APP)
      const etag = ok.headers.get('etag')!
      assert.ok(etag)
      const again = await ofrepBulk(closed.sdkKey, APP, { 'if-none-match': etag })
      assert.equal(again.status, 304)
      assertGranted(again, APP)
      assertRefused(await ofrepBulk(closed.sdkKey, OTHER))
    })

    it('OFREP single flag and configuration decide by the project', async () => {
      const single = (origin: string) => call('POST', `${base}/ofrep/v1/evaluate/flags/on`, { json: { context: {} }, key: closed.sdkKey, headers: { origin } })
      assertGranted(await single(APP), APP)
      assertRefused(await single(OTHER))
      const config = (origin: string) => get(`${base}/ofrep/v1/configuration`, { key: closed.sdkKey, headers: { origin } })
      assertGranted(await config(APP), APP)
      assertRefused(await config(OTHER))
    })

    it('a bad body after the key was accepted: the project decides who may read the 400', async () => {
      const bad = { context: 'nope' }
      const ok = await evaluate(closed.sdkKey, APP, bad)
      assert.equal(ok.status, 400, ok.text)
      assertGranted(ok, APP)
      const no = await evaluate(closed.sdkKey, OTHER, bad)
      assert.equal(no.status, 400, no.text)
      assertRefused(no)
      const ofrep = await call('POST', `${base}/ofrep/v1/evaluate/flags`, { raw: '{nope', key: closed.sdkKey, headers: { origin: OTHER } })
      assert.equal(ofrep.status, 400)
      assert.equal(ofrep.json.errorCode, 'PARSE_ERROR')
      assertRefused(ofrep)
    })

    it('answers given before the project is known (bad key, malformed JSON) are readable from any origin', async () => {
      const r401 = await evaluate('fbsdk_unknown', OTHER)
      assert.equal(r401.status, 401, r401.text)
      assertGranted(r401, OTHER)
      const malformed = await call('POST', `${base}/api/v1/evaluate`, { raw: '{"sdk_key":', headers: { origin: OTHER } })
      assert.equal(malformed.status, 400)
      assertGranted(malformed, OTHER)
      const ofrep401 = await ofrepBulk('fbsdk_unknown', OTHER)
      assert.equal(ofrep401.status, 401)
      assertGranted(ofrep401, OTHER)
      const get401 = await get(`${base}/api/v1/evaluate/on?sdk_key=fbsdk_unknown`, { headers: { origin: OTHER } })
      assert.equal(get401.status, 401)
      assertGranted(get401, OTHER)
      // The general stack's body parser answers before any route: its errors carry the headers too.
      const textPlain = await call('POST', `${base}/api/v1/evaluate`, { raw: '{}', headers: { origin: OTHER, 'content-type': 'text/plain' } })
      assert.equal(textPlain.status, 415)
      assertGranted(textPlain, OTHER)
      const badGzip = await call('POST', `${base}/api/v1/evaluate`, { raw: gzipSync('{"sdk_key":'), headers: { origin: OTHER, 'content-encoding': 'gzip' } })
      assert.equal(badGzip.status, 400, badGzip.text)
      assertGranted(badGzip, OTHER)
    })

    it('a 429 (rate limit, checked with the key before the project is loaded) is readable, Retry-After exposed', async () => {
      // The free plan admits 20 evaluation requests per second per SDK key: 60 at once go over it.
      const t = await signup(base, 'cors-burst@example.com')
      const all = await Promise.all(Array.from({ length: 60 }, () => evaluate(t.sdkKey, OTHER)))
      const limited = all.filter((r) => r.status === 429)
      assert.ok(limited.length > 0, `statuses: ${all.map((r) => r.status).join(',')}`)
      for (const r of limited) {
        assertGranted(r, OTHER)
        assert.ok(r.headers.get('retry-after'))
      }
    })

    it('allowed_origins [] turns browser access off; ["*"] opens it again, at once', async () => {
      const t = await signup(base, 'cors-toggle@example.com')
      await post(`${base}/api/v1/projects/${t.projectId}/flags`, { key: 'on', enabled: true }, { key: t.apiKey })
      assertGranted(await evaluate(t.sdkKey, APP), APP)
      const off = await call('PATCH', `${base}/api/v1/projects/${t.projectId}`, { json: { allowed_origins: [] }, key: t.apiKey })
      assert.deepEqual(off.json.allowed_origins, [])
      assertRefused(await evaluate(t.sdkKey, APP))
      assertRefused(await ofrepBulk(t.sdkKey, APP))
      await call('PATCH', `${base}/api/v1/projects/${t.projectId}`, { json: { allowed_origins: ['*'] }, key: t.apiKey })
      assertGranted(await evaluate(t.sdkKey, APP), APP)
    })
  })

  describe('management API: closed by default', () => {
    it('no CORS headers on a preflight or a request from any origin', async () => {
      const pre = await call('OPTIONS', `${base}/api/v1/projects`, {
        headers: { origin: APP, 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization' },
      })
      assert.equal(acao(pre), null)
      assert.equal(pre.headers.get('access-control-allow-headers'), null)
      const r = await get(`${base}/api/v1/projects`, { key: open.apiKey, headers: { origin: APP } })
      assert.equal(r.status, 200)
      assert.equal(acao(r), null)
      const signupPre = await call('OPTIONS', `${base}/api/v1/signup`, { headers: { origin: APP, 'access-control-request-method': 'POST' } })
      assert.equal(acao(signupPre), null)
    })
  })
})

describe('flags: CORS of the management API with CORS_MANAGEMENT_ORIGINS', () => {
  const ADMIN = 'https://admin.example.com'
  let sys: TestSystem
  let base: string
  let t: { apiKey: string; sdkKey: string; projectId: string }

  before(async () => {
    sys = await startSystem({ services: ['flags'], workers: false, env: { CORS_MANAGEMENT_ORIGINS: `${ADMIN}/, http://localhost:5173` } })
    base = sys.root.flags
    t = await signup(base, 'cors-admin@example.com')
  })
  after(async () => {
    await sys?.stop()
  })

  it('a listed origin: preflight 204 allowing Authorization and PATCH, and the answer is readable', async () => {
    const pre = await call('OPTIONS', `${base}/api/v1/projects/${t.projectId}`, {
      headers: { origin: ADMIN, 'access-control-request-method': 'PATCH', 'access-control-request-headers': 'authorization,content-type' },
    })
    assert.equal(pre.status, 204)
    assert.equal(acao(pre), ADMIN)
    assert.ok((pre.headers.get('access-control-allow-methods') ?? '').split(',').includes('PATCH'))
    assert.match(pre.headers.get('access-control-allow-headers') ?? '', /Authorization/)
    assert.equal(pre.headers.get('access-control-allow-credentials'), null)
    const r = await get(`${base}/api/v1/projects`, { key: t.apiKey, headers: { origin: ADMIN } })
    assert.equal(r.status, 200)
    assert.equal(acao(r), ADMIN)
    assert.ok(varies(r))
    assert.equal(acao(await get(`${base}/api/v1/projects`, { key: t.apiKey, headers: { origin: 'http://localhost:5173' } })), 'http://localhost:5173')
    // Errors too, the body parser's included, so that the front-end can show them.
    const malformed = await call('POST', `${base}/api/v1/projects`, { raw: '{"name":', key: t.apiKey, headers: { origin: ADMIN } })
    assert.equal(malformed.status, 400)
    assert.equal(acao(malformed), ADMIN)
  })

  it('an origin not listed gets no CORS headers', async () => {
    const pre = await call('OPTIONS', `${base}/api/v1/projects`, { headers: { origin: APP, 'access-control-request-method': 'GET' } })
    assert.equal(acao(pre), null)
    const r = await get(`${base}/api/v1/projects`, { key: t.apiKey, headers: { origin: APP } })
    assert.equal(r.status, 200)
    assert.equal(acao(r), null)
  })

  it('evaluation paths keep their own policy (by project), not the management list', async () => {
    const r = await post(`${base}/api/v1/evaluate`, { sdk_key: t.sdkKey }, { headers: { origin: APP } })
    assert.equal(r.status, 200, r.text)
    assert.equal(acao(r), APP)
    assert.equal(r.headers.get('access-control-allow-methods'), null)
  })
})
