// OpenFeature Remote Evaluation Protocol: the real OpenFeature server SDK with the OFREP provider
// against the service (boolean and string flags, targeting, disabled, missing), and the protocol's
// shapes on the wire (error codes, bulk ETag / If-None-Match → 304, auth, rate limit).
import assert from 'node:assert/strict'
import { OpenFeature, type Client } from '@openfeature/server-sdk'
import { OFREPProvider } from '@openfeature/ofrep-provider'
import { setPlan } from '../src/platform/accounts.ts'
import { sha256 } from '../src/platform/ids.ts'
import { startSystem, type TestSystem } from './helpers/system.ts'
import { call, post } from './helpers/http.ts'

describe('flags: OpenFeature (OFREP)', () => {
  let sys: TestSystem
  let base: string
  let t: { apiKey: string; sdkKey: string; projectId: string }
  let client: Client
  let n = 0

  async function signup(plan?: 'business') {
    const r = await post(`${base}/api/v1/signup`, { email: `ofrep${++n}@example.com` })
    assert.equal(r.status, 201, r.text)
    if (plan) {
      const acc = await sys.platform.db.collection('accounts').findOne({ key_hash: sha256(r.json.api_key) })
      await setPlan(sys.platform.db, String(acc!._id), plan)
    }
    return { apiKey: r.json.api_key as string, sdkKey: r.json.sdk_key as string, projectId: r.json.project.id as string }
  }
  const createFlag = async (body: Record<string, unknown>) => {
    const r = await post(`${base}/api/v1/projects/${t.projectId}/flags`, body, { key: t.apiKey })
    assert.equal(r.status, 201, r.text)
  }
  const ofrep = (path: string, body: unknown, key = t.sdkKey, headers: Record<string, string> = {}) =>
    call('POST', `${base}/ofrep/v1/evaluate/flags${path}`, { json: body, key, headers })

  before(async () => {
    sys = await startSystem({ services: ['flags'], workers: false })
    base = sys.url.flags
    t = await signup('business')
    await createFlag({
      key: 'new-checkout',
      enabled: true,
      default_value: 'false',
      rules: [{ conditions: [{ attribute: 'country', operator: 'in', value: ['DE', 'AT'] }], value: 'true' }],
    })
    await createFlag({
      key: 'button-color',
      enabled: true,
      default_value: 'green',
      rules: [
        { conditions: [{ attribute: 'plan', operator: 'eq', value: 'pro' }], value: 'blue' },
        { conditions: [{ attribute: 'targetingKey', operator: 'percent', value: 100 }], value: 'red' },
      ],
    })
    await createFlag({ key: 'legacy', enabled: false, rules: [{ conditions: [], value: 'true' }] })
    await OpenFeature.setProviderAndWait('ofrep-test', new OFREPProvider({ baseUrl: base, headers: [['Authorization', `Bearer ${t.sdkKey}`]] }))
    client = OpenFeature.getClient('ofrep-test')
  })
  after(async () => {
    await OpenFeature.close()
    await sys?.stop()
  })

  describe('with the OpenFeature server SDK and the OFREP provider', () => {
    it('evaluates a boolean flag, targeting by context', async () => {
      assert.equal(await client.getBooleanValue('new-checkout', false, { targetingKey: 'u1', country: 'DE' }), true)
      assert.equal(await client.getBooleanValue('new-checkout', true, { targetingKey: 'u1', country: 'FR' }), false)
      const d = await client.getBooleanDetails('new-checkout', false, { country: 'AT' })
      assert.equal(d.value, true)
      assert.equal(d.reason, 'TARGETING_MATCH')
      assert.equal(d.variant, 'rule-0')
      assert.equal(d.errorCode, undefined)
      assert.equal(d.flagMetadata.rule_index, 0)
      assert.equal((await client.getBooleanDetails('new-checkout', true, { country: 'US' })).reason, 'DEFAULT')
    })

    it('evaluates a string flag: rule values, targeting key, default value', async () => {
      assert.equal(await client.getStringValue('button-color', 'grey', { plan: 'pro' }), 'blue')
      assert.equal(await client.getStringValue('button-color', 'grey', { targetingKey: 'user-7' }), 'red')
      const d = await client.getStringDetails('button-color', 'grey', {})
      assert.equal(d.value, 'green')
      assert.equal(d.reason, 'DEFAULT')
      assert.equal(d.variant, 'default')
    })

    it('a disabled flag serves false with reason DISABLED', async () => {
      const d = await client.getBooleanDetails('legacy', true, { country: 'DE' })
      assert.equal(d.value, false)
      assert.equal(d.reason, 'DISABLED')
      assert.equal(d.errorCode, undefined)
    })

    it('a missing flag returns the code default with FLAG_NOT_FOUND', async () => {
      const d = await client.getBooleanDetails('does-not-exist', true, { country: 'DE' })
      assert.equal(d.value, true)
      assert.equal(d.errorCode, 'FLAG_NOT_FOUND')
      assert.equal(await client.getStringValue('nope', 'fallback'), 'fallback')
    })

    it('a wrong type returns the code default with TYPE_MISMATCH', async () => {
      const d = await client.getStringDetails('new-checkout', 'x', { country: 'DE' })
      assert.equal(d.value, 'x')
      assert.equal(d.errorCode, 'TYPE_MISMATCH')
    })

    it('an invalid SDK key returns the code default with an error', async () => {
      await OpenFeature.setProviderAndWait('ofrep-bad', new OFREPProvider({ baseUrl: base, headers: [['Authorization', 'Bearer fbsdk_wrong']] }))
      const d = await OpenFeature.getClient('ofrep-bad').getBooleanDetails('new-checkout', true, { country: 'FR' })
      assert.equal(d.value, true)
      assert.ok(d.errorCode)
    })
  })

  describe('on the wire', () => {
    it('single flag: typed value, reason, variant, metadata', async () => {
      const r = await ofrep('/new-checkout', { context: { country: 'DE' } })
      assert.equal(r.status, 200, r.text)
      assert.match(r.headers.get('content-type')!, /application\/json/)
      assert.deepEqual(r.json, { key: 'new-checkout', value: true, reason: 'TARGETING_MATCH', variant: 'rule-0', metadata: { rule_index: 0 } })
      const none = await call('POST', `${base}/ofrep/v1/evaluate/flags/button-color`, { key: t.sdkKey })
      assert.deepEqual(none.json, { key: 'button-color', value: 'green', reason: 'DEFAULT', variant: 'default', metadata: {} })
    })

    it('error shapes: 404 FLAG_NOT_FOUND, 400 PARSE_ERROR / INVALID_CONTEXT, 401 without a valid SDK key', async () => {
      const nf = await ofrep('/ghost', {})
      assert.equal(nf.status, 404)
      assert.equal(nf.json.key, 'ghost')
      assert.equal(nf.json.errorCode, 'FLAG_NOT_FOUND')
      assert.equal(typeof nf.json.errorDetails, 'string')
      const parse = await call('POST', `${base}/ofrep/v1/evaluate/flags/new-checkout`, { raw: '{"context":', key: t.sdkKey })
      assert.equal(parse.status, 400)
      assert.deepEqual(parse.json, { key: 'new-checkout', errorCode: 'PARSE_ERROR', errorDetails: 'Malformed JSON body' })
      for (const body of [{ context: 'DE' }, { context: [1] }, [], 'x']) {
        const bad = await ofrep('/new-checkout', body)
        assert.equal(bad.status, 400, JSON.stringify(body))
        assert.equal(bad.json.errorCode, 'INVALID_CONTEXT')
      }
      const bulkBad = await ofrep('', { context: 5 })
      assert.equal(bulkBad.status, 400)
      assert.equal(bulkBad.json.errorCode, 'INVALID_CONTEXT')
      const tooBig = await call('POST', `${base}/ofrep/v1/evaluate/flags/new-checkout`, { raw: `{"context":{"a":"${'x'.repeat(300_000)}"}}`, key: t.sdkKey })
      assert.equal(tooBig.status, 413)
      assert.equal((await ofrep('/new-checkout', {}, '')).status, 401)
      assert.equal((await ofrep('/new-checkout', {}, t.apiKey)).status, 401)
      const unauth = await ofrep('', {}, 'fbsdk_nope')
      assert.equal(unauth.status, 401)
      assert.equal(unauth.headers.get('www-authenticate'), 'Bearer')
      // The spec's alternative header works too.
      const viaHeader = await call('POST', `${base}/ofrep/v1/evaluate/flags/new-checkout`, { json: { context: { country: 'AT' } }, headers: { 'x-api-key': t.sdkKey } })
      assert.equal(viaHeader.json.value, true)
    })

    it('bulk: every flag, with an ETag; If-None-Match answers 304 until flags or context change', async () => {
      const body = { context: { country: 'DE', plan: 'pro' } }
      const r = await ofrep('', body)
      assert.equal(r.status, 200, r.text)
      assert.deepEqual(
        r.json.flags.map((f: any) => [f.key, f.value, f.reason]),
        [
          ['button-color', 'blue', 'TARGETING_MATCH'],
          ['legacy', false, 'DISABLED'],
          ['new-checkout', true, 'TARGETING_MATCH'],
        ],
      )
      const etag = r.headers.get('etag')!
      assert.match(etag, /^"[^"]+"$/)
      const again = await ofrep('', body, t.sdkKey, { 'if-none-match': etag })
      assert.equal(again.status, 304)
      assert.equal(again.body.length, 0)
      assert.equal(again.headers.get('etag'), etag)
      assert.equal((await ofrep('', body, t.sdkKey, { 'if-none-match': `"other", W/${etag}` })).status, 304)
      // Another context is another answer.
      const fr = await ofrep('', { context: { country: 'FR' } }, t.sdkKey, { 'if-none-match': etag })
      assert.equal(fr.status, 200)
      assert.notEqual(fr.headers.get('etag'), etag)
      // A flag change changes the tag.
      const put = await call('PUT', `${base}/api/v1/projects/${t.projectId}/flags/legacy`, { json: { enabled: true }, key: t.apiKey })
      assert.equal(put.status, 200)
      const changed = await ofrep('', body, t.sdkKey, { 'if-none-match': etag })
      assert.equal(changed.status, 200)
      assert.notEqual(changed.headers.get('etag'), etag)
      assert.deepEqual(changed.json.flags.find((f: any) => f.key === 'legacy').value, true)
    })

    it('bulk on a project without flags is an empty list', async () => {
      const empty = await signup()
      const r = await ofrep('', {}, empty.sdkKey)
      assert.equal(r.status, 200)
      assert.deepEqual(r.json, { flags: [], eventStreams: [{ type: 'sse', endpoint: { requestUri: `/ofrep/v1/stream?sdk_key=${empty.sdkKey}` }, inactivityDelaySec: 120 }] })
    })

    it('rate limited requests are 429 with Retry-After (shared with the native API)', async () => {
      const free = await signup()
      const rs = await Promise.all(Array.from({ length: 25 }, () => ofrep('', {}, free.sdkKey)))
      assert.equal(rs.filter((r) => r.status === 200).length, 20)
      const limited = rs.filter((r) => r.status === 429)
      assert.equal(limited.length, 5)
      assert.ok(Number(limited[0]!.headers.get('retry-after')) >= 1)
    })
  })
})
