// Compressed request bodies on every service: a body labelled gzip, deflate or br that is not
// validly compressed is a 400 naming the encoding (never a 500) and changes nothing; valid ones
// are inflated; webhook capture stores what it received, byte for byte.
import assert from 'node:assert/strict'
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib'
import Stripe from 'stripe'
import { startSystem, type TestSystem } from './helpers/system.ts'
import { assertJsonError, call, get, post } from './helpers/http.ts'

const ENCODINGS = {
  gzip: gzipSync,
  deflate: deflateSync,
  br: brotliCompressSync,
} satisfies Record<string, (b: Buffer) => Buffer>
type Encoding = keyof typeof ENCODINGS

/** Bodies that claim an encoding they do not have: plain JSON, and valid data cut short. */
function corrupt(enc: Encoding): Array<[string, Buffer]> {
  const whole = ENCODINGS[enc](Buffer.from(JSON.stringify({ email: 'x@example.com', items: [], padding: 'p'.repeat(200) })))
  return [
    ['plain JSON', Buffer.from('{"items":[]}')],
    ['truncated', whole.subarray(0, Math.floor(whole.length / 2))],
  ]
}

const message = (enc: string) => `Body is not valid ${enc} (Content-Encoding: ${enc})`

describe('platform: compressed request bodies', function () {
  this.timeout(60_000)
  let sys: TestSystem
  let invoiceKey: string
  let flags: { apiKey: string; sdkKey: string }
  let hooks: { key: string; token: string; url: string }

  before(async () => {
    sys = await startSystem({ workers: false })
    invoiceKey = (await post(`${sys.url.invoice}/signup`, { email: 'enc-invoice@example.com' })).json.api_key
    const f = (await post(`${sys.root.flags}/api/v1/signup`, { email: 'enc-flags@example.com' })).json
    flags = { apiKey: f.api_key, sdkKey: f.sdk_key }
    const key = (await post(`${sys.root.webhooks}/api/v1/signup`, { email: 'enc-hooks@example.com' })).json.api_key
    const ep = (await post(`${sys.root.webhooks}/api/v1/endpoints`, {}, { key })).json
    hooks = { key, token: ep.endpoint_id, url: ep.url }
    assert.ok(invoiceKey && flags.sdkKey && hooks.token, 'setup')
  })
  after(async () => {
    await sys?.stop()
  })

  const send = (url: string, body: Buffer, enc: string, opts: { key?: string; headers?: Record<string, string> } = {}) =>
    call('POST', url, { raw: body, key: opts.key, headers: { 'content-encoding': enc, ...opts.headers } })

  // Every JSON route of every service goes through the one body parser; these are a sample of
  // each service, with and without a key, and the flag evaluation hot route.
  const parsed: Array<[string, () => string, () => string | undefined]> = [
    ['invoice POST /invoice', () => `${sys.url.invoice}/invoice`, () => invoiceKey],
    ['invoice POST /signup', () => `${sys.url.invoice}/signup`, () => undefined],
    ['flags POST /api/v1/signup', () => `${sys.root.flags}/api/v1/signup`, () => undefined],
    ['flags POST /api/v1/evaluate (hot route)', () => `${sys.root.flags}/api/v1/evaluate`, () => undefined],
    ['flags POST /api/v1/projects', () => `${sys.root.flags}/api/v1/projects`, () => flags.apiKey],
    ['webhooks POST /api/v1/signup', () => `${sys.root.webhooks}/api/v1/signup`, () => undefined],
    ['webhooks POST /api/v1/endpoints', () => `${sys.root.webhooks}/api/v1/endpoints`, () => hooks.key],
  ]

  for (const enc of Object.keys(ENCODINGS) as Encoding[]) {
    describe(`Content-Encoding: ${enc}`, () => {
      for (const [name, url, key] of parsed) {
        it(`${name}: a corrupt body is a 400 naming ${enc}`, async () => {
          for (const [, body] of corrupt(enc)) assertJsonError(await send(url(), body, enc, { key: key() }), 400, message(enc), { exact: true })
        })
      }

      it('a corrupt signup body creates no account', async () => {
        const accounts = sys.platform.db.collection('accounts')
        const before = await accounts.countDocuments()
        const body = Buffer.from(JSON.stringify({ email: `nothing-${enc}@example.com` }))
        assertJsonError(await send(`${sys.url.invoice}/signup`, body, enc), 400, message(enc))
        assert.equal(await accounts.countDocuments(), before)
      })

      it('a validly compressed body is inflated and served', async () => {
        const signup = await send(`${sys.url.invoice}/signup`, ENCODINGS[enc](Buffer.from(JSON.stringify({ email: `ok-${enc}@example.com` }))), enc)
        assert.ok([200, 201].includes(signup.status), signup.text)
        assert.match(signup.json.api_key, /^dm_/)
        const evaluate = await send(`${sys.root.flags}/api/v1/evaluate`, ENCODINGS[enc](Buffer.from(JSON.stringify({ sdk_key: flags.sdkKey, flags: ['nope'] }))), enc)
        assert.equal(evaluate.status, 200, evaluate.text)
      })

      it('OFREP: a corrupt body is a PARSE_ERROR naming the encoding; a valid one evaluates', async () => {
        const url = `${sys.root.flags}/ofrep/v1/evaluate/flags`
        const headers = { authorization: `Bearer ${flags.sdkKey}` }
        for (const [, body] of corrupt(enc)) {
          const res = await send(url, body, enc, { headers })
          assert.equal(res.status, 400, res.text)
          assert.deepEqual(res.json, { errorCode: 'PARSE_ERROR', errorDetails: message(enc) })
        }
        const ok = await send(url, ENCODINGS[enc](Buffer.from(JSON.stringify({ context: { targetingKey: 'u1' } }))), enc, { headers })
        assert.equal(ok.status, 200, ok.text)
        assert.deepEqual(ok.json.flags, [])
      })

      it('the Stripe webhook of every service: corrupt → 400 naming the encoding; valid → verified and accepted', async () => {
        const payload = JSON.stringify({ id: `evt_enc_${enc}`, object: 'event', type: 'customer.created', data: { object: { id: 'cus_1' } } })
        const signature = Stripe.webhooks.generateTestHeaderString({ payload, secret: sys.config.STRIPE_WEBHOOK_SECRET! })
        for (const service of ['invoice', 'flags', 'webhooks']) {
          const url = `${sys.root[service]}/api/v1/billing/stripe-webhook`
          for (const [, body] of corrupt(enc)) {
            assertJsonError(await send(url, body, enc, { headers: { 'stripe-signature': signature } }), 400, message(enc), { exact: true })
          }
          const ok = await send(url, ENCODINGS[enc](Buffer.from(payload)), enc, { headers: { 'stripe-signature': signature } })
          assert.equal(ok.status, 200, `${service}: ${ok.text}`)
          assert.equal(ok.json.received, true)
        }
      })

      it('webhook capture stores a corrupt body exactly as received', async () => {
        for (const [, body] of corrupt(enc)) {
          const res = await send(`${sys.root.webhooks}/hook/${hooks.token}`, body, enc, { headers: { 'content-type': 'application/json' } })
          assert.equal(res.status, 200, res.text)
          const list = await get(`${sys.root.webhooks}/api/v1/endpoints/${hooks.token}/requests?limit=1`, { key: hooks.key })
          const latest = list.json.requests[0]
          assert.equal(latest.headers['content-encoding'], enc)
          const raw = await get(`${sys.root.webhooks}/api/v1/endpoints/${hooks.token}/requests/${latest.id}/body`, { key: hooks.key })
          assert.ok(raw.body.equals(body), 'stored byte-exact, not inflated')
        }
      })
    })
  }

  it('an encoding no service inflates is a 415 naming the problem', async () => {
    assertJsonError(await send(`${sys.url.invoice}/signup`, Buffer.from('{}'), 'compress'), 415, 'Unsupported content encoding')
    const ofrep = await send(`${sys.root.flags}/ofrep/v1/evaluate/flags`, Buffer.from('{}'), 'compress', { headers: { authorization: `Bearer ${flags.sdkKey}` } })
    assertJsonError(ofrep, 415, 'Unsupported content encoding')
  })
})
