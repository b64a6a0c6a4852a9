// Unit tests of the sender signature schemes (src/webhooks/signatures): for each, a valid
// signature, a changed body, a wrong secret or key, a stale timestamp where the sender has a
// tolerance, and malformed headers or keys (400). Signatures are made by the sender's official
// library where it signs (twilio, @shopify/shopify-api's test helper) and otherwise per the
// sender's documentation, and then accepted by the sender's official verifier where one exists
// (@slack/bolt, square, discord-interactions, @sendgrid/eventwebhook, @linear/sdk), so the
// formats are the senders' own. End-to-end checks through the API are in webhooks-verify.test.ts.
import assert from 'node:assert/strict'
import { createHmac, generateKeyPairSync, sign } from 'node:crypto'
import { EventWebhook } from '@sendgrid/eventwebhook'
import fc from 'fast-check'
import { LinearWebhookClient } from '@linear/sdk/webhooks'
import { getHmac as shopifyHmac } from '@shopify/shopify-api/test-helpers'
import { verifySlackRequest } from '@slack/bolt'
import { verifyKey as discordVerifyKey } from 'discord-interactions'
import { WebhooksHelper } from 'square'
import twilio from 'twilio'
import { HttpError } from '../src/platform/http/errors.ts'
import { SCHEMES, verifySignature, type Scheme } from '../src/webhooks/signatures/index.ts'

// A whole second, so a skew computed from it is exact (received_at minus a signed time in seconds).
// Taken before each test, not when the file loads: in a full run this file's tests start many
// minutes after loading, and the senders' libraries compare with the real time.
let nowSec = 0
let now = new Date(0)
const body = JSON.stringify({ id: 'evt_1', type: 'order.created', amount: 1999, note: 'Grüße' })
const URL_ = 'https://hooks.example.com/hook/tok123?source=test'

function check(headers: Record<string, string>, secret: string, opts: { body?: string | Buffer; scheme?: Scheme; url?: string; receivedAt?: Date } = {}) {
  const lower = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]))
  return verifySignature({
    headers: lower,
    secret,
    body: Buffer.from(opts.body ?? body),
    receivedAt: opts.receivedAt ?? now,
    url: opts.url ?? URL_,
    ...(opts.scheme ? { scheme: opts.scheme } : {}),
  })
}

function refuses(fn: () => unknown, message: RegExp) {
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof HttpError, `expected an HttpError, got ${String(e)}`)
    assert.equal(e.status, 400)
    assert.match(e.message, message)
    return true
  })
}

const hex256 = (key: string, ...parts: string[]) => parts.reduce((h, p) => h.update(p), createHmac('sha256', key)).digest('hex')

describe('webhooks: signature schemes', () => {
  beforeEach(() => {
    nowSec = Math.floor(Date.now() / 1000)
    now = new Date(nowSec * 1000)
  })
  it('every scheme the request schema offers is in the registry, and detection prefers GitHub over Intercom', () => {
    assert.equal(new Set(SCHEMES).size, 14)
    const sha1 = `sha1=${createHmac('sha1', 's').update(body).digest('hex')}`
    const both = check({ 'X-Hub-Signature-256': `sha256=${hex256('s', body)}`, 'X-Hub-Signature': sha1 }, 's')
    assert.equal(both.scheme, 'github')
    assert.equal(both.valid, true)
    const legacy = check({ 'X-Hub-Signature': sha1 }, 's')
    assert.equal(legacy.scheme, 'intercom')
    assert.equal(legacy.valid, true)
    refuses(() => check({ 'Content-Type': 'application/json' }, 's'), /No signature header found \(looked for Stripe-Signature, .*X-Shopify-Hmac-Sha256, X-Slack-Signature, X-Twilio-Signature, .*X-Signature-Ed25519, Linear-Signature, X-Hub-Signature\)/)
    refuses(() => check({ 'X-Hub-Signature-256': 'x'.repeat(5000) }, 's'), /X-Hub-Signature-256 header is too long to be a signature \(5000 characters\)/)
    // A scheme asked for whose header the request lacks says so, and what the request does carry.
    refuses(() => check({ 'X-Hub-Signature': sha1 }, 's', { scheme: 'shopify' }), /^Shopify signs with the X-Shopify-Hmac-Sha256 header, which this request does not carry \(it carries X-Hub-Signature: intercom\)$/)
    refuses(() => check({}, 's', { scheme: 'twilio' }), /^Twilio signs with the X-Twilio-Signature header, which this request does not carry$/)
  })

  describe('Shopify (X-Shopify-Hmac-Sha256)', () => {
    const secret = 'shpss_0123456789abcdef'
    const headers = (b = body) => ({ 'X-Shopify-Hmac-Sha256': shopifyHmac(b, secret), 'X-Shopify-Topic': 'orders/create' })
    it('valid, changed body, wrong secret; no timestamp', () => {
      const ok = check(headers(), secret)
      assert.deepEqual([ok.valid, ok.scheme, ok.tolerance_seconds, ok.signed_at, ok.signed_url], [true, 'shopify', null, null, null])
      const changed = check(headers(), secret, { body: body.replace('1999', '1998') })
      assert.equal(changed.valid, false)
      assert.match(changed.reason, /wrong secret, or the body was changed/)
      assert.equal(check(headers(), 'shpss_other').valid, false)
    })
    it('malformed: not base64, wrong length', () => {
      refuses(() => check({ 'X-Shopify-Hmac-Sha256': 'not base64!' }, secret), /X-Shopify-Hmac-Sha256 header is malformed \(expected the base64 of 32 bytes\)/)
      refuses(() => check({ 'X-Shopify-Hmac-Sha256': Buffer.alloc(20).toString('base64') }, secret), /X-Shopify-Hmac-Sha256 header is malformed/)
    })
  })

  describe('Slack (X-Slack-Signature, X-Slack-Request-Timestamp)', () => {
    const secret = '8f742231b10e8888abcd99yyyzzz85a5'
    // Slack's own example ("Verifying requests from Slack", step-by-step walk-through).
    const docBody =
      'token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c'
    const docHeaders = { 'X-Slack-Request-Timestamp': '1531420618', 'X-Slack-Signature': 'v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503' }
    const signed = (ts: number, b = body) => ({ 'X-Slack-Request-Timestamp': String(ts), 'X-Slack-Signature': `v0=${hex256(secret, `v0:${ts}:`, b)}` })

    it("Slack's documented example verifies (received when it was signed)", () => {
      const r = check(docHeaders, secret, { body: docBody, receivedAt: new Date(1531420618_000) })
      assert.equal(r.valid, true, r.reason)
      assert.equal(r.scheme, 'slack')
      assert.equal(r.signed_at, '2018-07-12T18:36:58.000')
    })
    it("valid (Bolt's verifySlackRequest accepts it), changed body, wrong secret, stale by Slack's 5 minutes", () => {
      const h = signed(nowSec)
      const lower = { 'x-slack-signature': h['X-Slack-Signature'], 'x-slack-request-timestamp': nowSec }
      assert.doesNotThrow(() => verifySlackRequest({ signingSecret: secret, body, headers: lower }))
      const ok = check(h, secret)
      assert.deepEqual([ok.valid, ok.tolerance_seconds], [true, 300])
      assert.equal(check(h, secret, { body: body + ' ' }).valid, false)
      assert.equal(check(h, 'another-signing-secret').valid, false)
      const stale = check(signed(nowSec - 400), secret)
      assert.equal(stale.valid, false)
      assert.match(stale.reason, /outside the sender's tolerance: signed 400 s before it was received \(tolerance 300 s\)/)
    })
    it('malformed: signature without v0=, timestamp missing or not a number', () => {
      refuses(() => check({ ...signed(nowSec), 'X-Slack-Signature': hex256(secret, body) }, secret), /X-Slack-Signature header is malformed \(expected v0=<64 hex digits>\)/)
      refuses(() => check({ 'X-Slack-Signature': signed(nowSec)['X-Slack-Signature'] }, secret), /X-Slack-Request-Timestamp header is required for Slack/)
      refuses(() => check({ ...signed(nowSec), 'X-Slack-Request-Timestamp': 'yesterday' }, secret), /X-Slack-Request-Timestamp header is malformed/)
    })
  })

  describe('Twilio (X-Twilio-Signature)', () => {
    const token = 'twilio-auth-token-0123456789abcd'
    const form = 'To=%2B15551234567&From=%2B15557654321&Body=Hello+w%C3%B6rld&MediaUrl0=https%3A%2F%2Fa.example%2Fx&B=2&B=1'
    const params = { To: '+15551234567', From: '+15557654321', Body: 'Hello wörld', MediaUrl0: 'https://a.example/x', B: ['2', '1'] }
    const formHeaders = (url = URL_) => ({ 'Content-Type': 'application/x-www-form-urlencoded', 'X-Twilio-Signature': twilio.getExpectedTwilioSignature(token, url, params) })

    it('form POST signed by the twilio library: valid, changed parameter, wrong token, another URL', () => {
      const ok = check(formHeaders(), token, { body: form })
      assert.deepEqual([ok.valid, ok.scheme, ok.signed_url, ok.tolerance_seconds], [true, 'twilio', URL_, null], ok.reason)
      assert.equal(twilio.validateRequest(token, formHeaders()['X-Twilio-Signature'], URL_, params), true)
      assert.equal(check(formHeaders(), token, { body: form.replace('Hello', 'Hallo') }).valid, false)
      assert.equal(check(formHeaders(), 'another-token').valid, false)
      const elsewhere = check(formHeaders(), token, { body: form, url: 'http://10.0.0.5:3003/hook/tok123?source=test' })
      assert.equal(elsewhere.valid, false)
      assert.match(elsewhere.reason, /or Twilio signed another URL than http:\/\/10\.0\.0\.5:3003\/hook\/tok123\?source=test \(pass the URL configured at Twilio/)
    })
    it('a URL signed with its default port verifies without it, as the twilio library allows', () => {
      const withPort = 'https://hooks.example.com:443/hook/tok123?source=test'
      const r = check(formHeaders(withPort), token, { body: form })
      assert.equal(r.valid, true, r.reason)
      assert.equal(r.signed_url, withPort)
    })
    it('JSON body with bodySHA256 (validateRequestWithBody accepts it): valid, changed body', () => {
      const url = `${URL_}&bodySHA256=${twilio.getExpectedBodyHash(body)}`
      const h = { 'Content-Type': 'application/json', 'X-Twilio-Signature': twilio.getExpectedTwilioSignature(token, url, {}) }
      assert.equal(twilio.validateRequestWithBody(token, h['X-Twilio-Signature'], url, body), true)
      const ok = check(h, token, { url })
      assert.equal(ok.valid, true, ok.reason)
      const changed = check(h, token, { url, body: body.replace('1999', '1') })
      assert.equal(changed.valid, false)
      assert.match(changed.reason, /signature matches the URL, but the body's SHA-256 \([0-9a-f]{64}\) is not the bodySHA256 it carries/)
    })
    it('malformed: not base64 of 20 bytes', () => {
      refuses(() => check({ 'X-Twilio-Signature': 'abc' }, token), /X-Twilio-Signature header is malformed \(expected the base64 of 20 bytes\)/)
      refuses(() => check({ 'X-Twilio-Signature': Buffer.alloc(32).toString('base64') }, token), /X-Twilio-Signature header is malformed/)
    })
  })

  describe('Square (x-square-hmacsha256-signature)', () => {
    const key = 'sq0wss-signature-key_abc'
    // Square's "Validate notifications": base64 HMAC-SHA256 of notification URL + body.
    const sig = (url: string, b = body) => createHmac('sha256', key).update(url + b).digest('base64')
    it("valid (Square's WebhooksHelper accepts it), changed body, wrong key, another URL", async () => {
      assert.equal(await WebhooksHelper.verifySignature({ requestBody: body, signatureHeader: sig(URL_), signatureKey: key, notificationUrl: URL_ }), true)
      const ok = check({ 'x-square-hmacsha256-signature': sig(URL_) }, key)
      assert.deepEqual([ok.valid, ok.scheme, ok.signed_url], [true, 'square', URL_])
      assert.equal(check({ 'x-square-hmacsha256-signature': sig(URL_) }, key, { body: body.replace('order', 'refund') }).valid, false)
      assert.equal(check({ 'x-square-hmacsha256-signature': sig(URL_) }, 'other-key').valid, false)
      const elsewhere = check({ 'x-square-hmacsha256-signature': sig(URL_) }, key, { url: 'https://hooks.example.com/hook/tok123' })
      assert.equal(elsewhere.valid, false)
      assert.match(elsewhere.reason, /Square notified another URL than https:\/\/hooks\.example\.com\/hook\/tok123 \(pass the notification URL/)
    })
    it('malformed', () => {
      refuses(() => check({ 'x-square-hmacsha256-signature': '%%%' }, key), /x-square-hmacsha256-signature header is malformed/)
    })
  })

  describe('Zoom (x-zm-signature, x-zm-request-timestamp)', () => {
    const secret = 'zoom-secret-token'
    // Zoom's "Using webhooks › Verify webhook events": "v0=" + hex HMAC-SHA256 of "v0:{timestamp}:{body}".
    const signed = (ts: number, b = body) => ({ 'x-zm-request-timestamp': String(ts), 'x-zm-signature': `v0=${hex256(secret, `v0:${ts}:${b}`)}` })
    it('valid, changed body, wrong secret; no tolerance, so an old timestamp still verifies', () => {
      const ok = check(signed(nowSec), secret)
      assert.deepEqual([ok.valid, ok.scheme, ok.tolerance_seconds], [true, 'zoom', null])
      assert.equal(check(signed(nowSec), secret, { body: '{}' }).valid, false)
      assert.equal(check(signed(nowSec), 'wrong').valid, false)
      const old = check(signed(nowSec - 86_400), secret)
      assert.equal(old.valid, true)
      assert.equal(old.signed_at, new Date((nowSec - 86_400) * 1000).toISOString().slice(0, 23))
    })
    it('malformed', () => {
      refuses(() => check({ 'x-zm-signature': 'v1=abc', 'x-zm-request-timestamp': '1' }, secret), /x-zm-signature header is malformed/)
      refuses(() => check({ 'x-zm-signature': signed(nowSec)['x-zm-signature'] }, secret), /x-zm-request-timestamp header is required for Zoom/)
    })
  })

  describe('Intercom (X-Hub-Signature sha1)', () => {
    const secret = 'intercom-client-secret'
    // Intercom's "Webhooks › Signed notifications": "sha1=" + hex HMAC-SHA1 of the body with the client secret.
    const h = { 'X-Hub-Signature': `sha1=${createHmac('sha1', secret).update(body).digest('hex')}` }
    it('valid, changed body, wrong secret', () => {
      const ok = check(h, secret)
      assert.deepEqual([ok.valid, ok.scheme, ok.tolerance_seconds], [true, 'intercom', null])
      assert.equal(check(h, secret, { body: body.toUpperCase() }).valid, false)
      assert.equal(check(h, 'other').valid, false)
    })
    it('malformed', () => {
      refuses(() => check({ 'X-Hub-Signature': 'sha256=' + 'a'.repeat(40) }, secret), /X-Hub-Signature header is malformed \(expected sha1=<40 hex digits>\)/)
    })
  })

  describe('Linear (Linear-Signature, webhookTimestamp)', () => {
    const secret = 'lin_wh_secret'
    const linear = new LinearWebhookClient(secret)
    const payload = (ms: number) => JSON.stringify({ action: 'create', type: 'Issue', data: { id: 'i1' }, webhookTimestamp: ms })
    const sigOf = (b: string) => ({ 'Linear-Signature': hex256(secret, b) })
    it("valid (Linear's SDK accepts it), changed body, wrong secret, stale by the SDK's 60 s, no webhookTimestamp", () => {
      const fresh = payload(now.getTime())
      assert.equal(linear.verify(Buffer.from(fresh), sigOf(fresh)['Linear-Signature']), true)
      const ok = check(sigOf(fresh), secret, { body: fresh })
      assert.deepEqual([ok.valid, ok.scheme, ok.tolerance_seconds, ok.signed_at], [true, 'linear', 60, now.toISOString().slice(0, 23)], ok.reason)
      assert.equal(check(sigOf(fresh), secret, { body: fresh.replace('Issue', 'Comment') }).valid, false)
      assert.equal(check(sigOf(fresh), 'other', { body: fresh }).valid, false)
      const old = payload(now.getTime() - 90_000)
      const stale = check(sigOf(old), secret, { body: old })
      assert.equal(stale.valid, false)
      assert.match(stale.reason, /signed 90 s before it was received \(tolerance 60 s\)/)
      for (const b of [body, JSON.stringify({ type: 'Issue', webhookTimestamp: 1e300 }), JSON.stringify({ webhookTimestamp: String(now.getTime()) }), '[1,2']) {
        const none = check(sigOf(b), secret, { body: b })
        assert.equal(none.valid, false)
        assert.equal(none.signed_at, null)
        assert.match(none.reason, /signature matches, but the body has no webhookTimestamp \(a time in Unix milliseconds\)/)
      }
    })
    it('malformed', () => {
      refuses(() => check({ 'Linear-Signature': 'sha256=' + 'a'.repeat(64) }, secret), /Linear-Signature header is malformed \(expected <64 hex digits>\)/)
    })
  })

  describe('Discord (X-Signature-Ed25519 with the public key)', () => {
    const kp = generateKeyPairSync('ed25519')
    const publicKey = Buffer.from(kp.publicKey.export({ format: 'jwk' }).x!, 'base64url').toString('hex')
    const other = Buffer.from(generateKeyPairSync('ed25519').publicKey.export({ format: 'jwk' }).x!, 'base64url').toString('hex')
    const signed = (ts: string, b = body) => ({ 'X-Signature-Timestamp': ts, 'X-Signature-Ed25519': sign(null, Buffer.from(ts + b), kp.privateKey).toString('hex') })
    it('valid (discord-interactions verifyKey accepts it), changed body, changed timestamp, wrong public key', async () => {
      const h = signed(String(nowSec))
      assert.equal(await discordVerifyKey(body, h['X-Signature-Ed25519'], h['X-Signature-Timestamp'], publicKey), true)
      const ok = check(h, publicKey)
      assert.deepEqual([ok.valid, ok.scheme, ok.tolerance_seconds], [true, 'discord', null], ok.reason)
      assert.equal(check(h, publicKey.toUpperCase()).valid, true)
      assert.equal(check(h, publicKey, { body: body + '\n' }).valid, false)
      assert.equal(check({ ...h, 'X-Signature-Timestamp': String(nowSec + 1) }, publicKey).valid, false)
      const wrong = check(h, other)
      assert.equal(wrong.valid, false)
      assert.match(wrong.reason, /wrong public key, or the body or timestamp was changed/)
    })
    it('bad key formats and malformed headers → 400', () => {
      const h = signed(String(nowSec))
      refuses(() => check(h, 'my-bot-token'), /secret must be the application's public key for Discord: 64 hex digits/)
      refuses(() => check(h, publicKey.slice(2)), /secret must be the application's public key for Discord/)
      refuses(() => check({ ...h, 'X-Signature-Ed25519': 'zz' + h['X-Signature-Ed25519'].slice(2) }, publicKey), /X-Signature-Ed25519 header is malformed \(expected 128 hex digits\)/)
      refuses(() => check({ 'X-Signature-Ed25519': h['X-Signature-Ed25519'] }, publicKey), /X-Signature-Timestamp header is required for Discord/)
    })
  })

  describe('SendGrid (X-Twilio-Email-Event-Webhook-Signature with the verification key)', () => {
    const ec = generateKeyPairSync('ec', { namedCurve: 'prime256v1' })
    const key = (ec.publicKey.export({ format: 'der', type: 'spki' }) as Buffer).toString('base64')
    const pem = ec.publicKey.export({ format: 'pem', type: 'spki' }) as string
    const otherKey = (generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).publicKey.export({ format: 'der', type: 'spki' }) as Buffer).toString('base64')
    const events = JSON.stringify([{ email: 'a@example.com', event: 'delivered', sg_event_id: 'e1', timestamp: nowSec }]) + '\r\n'
    const signed = (ts: string, b = events) => ({
      'X-Twilio-Email-Event-Webhook-Timestamp': ts,
      'X-Twilio-Email-Event-Webhook-Signature': sign('sha256', Buffer.from(ts + b), ec.privateKey).toString('base64'),
    })
    it('valid (@sendgrid/eventwebhook accepts it), PEM key too, changed body, wrong key', () => {
      const h = signed(String(nowSec))
      const ew = new EventWebhook()
      assert.equal(ew.verifySignature(ew.convertPublicKeyToECDSA(key), events, h['X-Twilio-Email-Event-Webhook-Signature'], h['X-Twilio-Email-Event-Webhook-Timestamp']), true)
      const ok = check(h, key, { body: events })
      assert.deepEqual([ok.valid, ok.scheme, ok.tolerance_seconds], [true, 'sendgrid', null], ok.reason)
      assert.equal(check(h, pem, { body: events }).valid, true)
      assert.equal(check(h, key, { body: events.trim() }).valid, false)
      const wrong = check(h, otherKey, { body: events })
      assert.equal(wrong.valid, false)
      assert.match(wrong.reason, /wrong verification key/)
    })
    it('bad keys (not base64, an Ed25519 key, an HMAC secret) and malformed signatures → 400', () => {
      const h = signed(String(nowSec))
      const ed = (generateKeyPairSync('ed25519').publicKey.export({ format: 'der', type: 'spki' }) as Buffer).toString('base64')
      for (const bad of ['not a key!', ed, 'c2hvcnQ=']) refuses(() => check(h, bad, { body: events }), /secret must be the verification key for SendGrid: an ECDSA P-256 public key/)
      refuses(() => check({ ...h, 'X-Twilio-Email-Event-Webhook-Signature': 'QUJD' }, key, { body: events }), /X-Twilio-Email-Event-Webhook-Signature header is malformed/)
      refuses(() => check({ ...h, 'X-Twilio-Email-Event-Webhook-Signature': '***' }, key, { body: events }), /X-Twilio-Email-Event-Webhook-Signature header is malformed/)
      // A SEQUENCE tag followed by junk, and a valid signature with a byte cut off.
      const junk = Buffer.concat([Buffer.from([0x30, 0x06]), Buffer.from('abcdef')]).toString('base64')
      const cut = Buffer.from(h['X-Twilio-Email-Event-Webhook-Signature'], 'base64').subarray(0, -1).toString('base64')
      for (const bad of [junk, cut]) {
        refuses(() => check({ ...h, 'X-Twilio-Email-Event-Webhook-Signature': bad }, key, { body: events }), /X-Twilio-Email-Event-Webhook-Signature header is malformed \(expected a base64 DER ECDSA signature\)/)
      }
      refuses(() => check({ 'X-Twilio-Email-Event-Webhook-Signature': h['X-Twilio-Email-Event-Webhook-Signature'] }, key, { body: events }), /X-Twilio-Email-Event-Webhook-Timestamp header is required for SendGrid/)
    })
  })

  it('any header values, secret and body: an answer or a 400 for every scheme, never another error (property)', () => {
    // Every header any scheme reads, each absent or arbitrary (often near-valid: a known prefix
    // followed by arbitrary text), so parsers meet both garbage and almost-right values.
    const names = [
      'stripe-signature', 'paddle-signature', 'webhook-id', 'webhook-timestamp', 'webhook-signature', 'svix-id', 'svix-timestamp', 'svix-signature',
      'x-hub-signature-256', 'x-hub-signature', 'x-shopify-hmac-sha256', 'x-slack-signature', 'x-slack-request-timestamp', 'x-twilio-signature',
      'content-type', 'x-twilio-email-event-webhook-signature', 'x-twilio-email-event-webhook-timestamp', 'x-square-hmacsha256-signature',
      'x-zm-signature', 'x-zm-request-timestamp', 'x-signature-ed25519', 'x-signature-timestamp', 'linear-signature',
    ]
    const value = fc.oneof(
      fc.string({ maxLength: 80 }),
      fc.tuple(fc.constantFrom('t=1,v1=', 'ts=1;h1=', 'v1,', 'sha256=', 'sha1=', 'v0=', 'MEUCI', '1700000000', 'application/x-www-form-urlencoded'), fc.string({ maxLength: 80 })).map(([a, b]) => a + b),
      fc.stringMatching(/^[0-9a-f]{40,128}$/),
      fc.uint8Array({ minLength: 1, maxLength: 72 }).map((b) => Buffer.from(b).toString('base64')),
    )
    const headers = fc.record(Object.fromEntries(names.map((n) => [n, value])), { requiredKeys: [] }) as fc.Arbitrary<Record<string, string>>
    const secret = fc.oneof(fc.string({ minLength: 1, maxLength: 200 }), fc.stringMatching(/^[0-9a-f]{64}$/), fc.constant('whsec_'), fc.uint8Array({ minLength: 1, maxLength: 120 }).map((b) => Buffer.from(b).toString('base64')))
    fc.assert(
      fc.property(fc.constantFrom(undefined, ...SCHEMES), headers, secret, fc.uint8Array({ maxLength: 200 }), fc.tuple(fc.constantFrom('https://a.example', 'http://[::1]:8080', 'https://h.example:443'), fc.string({ maxLength: 30 }), fc.option(fc.string({ maxLength: 70 }))).map(
        ([origin, path, hash]) => `${origin}/${encodeURIComponent(path)}${hash === null ? '' : `?bodySHA256=${encodeURIComponent(hash)}`}`,
      ), (scheme, h, sec, b, url) => {
        try {
          const r = verifySignature({ headers: h, secret: sec, body: Buffer.from(b), receivedAt: now, url, ...(scheme ? { scheme } : {}) })
          assert.equal(typeof r.valid, 'boolean')
          assert.equal(typeof r.reason, 'string')
        } catch (e) {
          if (!(e instanceof HttpError) || e.status !== 400) throw e
        }
      }),
      { numRuns: 1_000 },
    )
  })
})
