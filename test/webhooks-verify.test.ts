import assert from 'node:assert/strict'
import { createHmac, generateKeyPairSync, sign } from 'node:crypto'
import { sign as githubSign, verify as githubVerify } from '@octokit/webhooks-methods'
import { Paddle } from '@paddle/paddle-node-sdk'
import '@shopify/shopify-api/adapters/web-api'
import { ApiVersion, LogSeverity, shopifyApi } from '@shopify/shopify-api'
import { getHmac as shopifyHmac } from '@shopify/shopify-api/test-helpers'
import { verifyKey as discordVerifyKey } from 'discord-interactions'
import { Webhook as StandardWebhook } from 'standardwebhooks'
import Stripe from 'stripe'
import { Webhook as SvixWebhook } from 'svix'
import twilio from 'twilio'
import { startSystem, type TestSystem } from './helpers/system.ts'
import { get, post } from './helpers/http.ts'
import { rawRequest } from './helpers/raw-http.ts'
import { api, capture, createEndpoint, signup } from './helpers/webhooks.ts'

// A billing event as the spec describes it (event_id, event_type, occurred_at, data.items[].price...).
const payload = JSON.stringify({
  event_id: 'evt_01h', event_type: 'transaction.completed', occurred_at: '2026-11-21T09:15:02.123Z', notification_id: 'ntf_01h',
  data: { id: 'txn_1', status: 'completed', customer_id: 'ctm_1', currency_code: 'EUR', items: [{ price: { unit_price: { amount: '1999', currency_code: 'EUR' } } }] },
}, null, 1) + '\n'

describe('webhooks: signature verification', () => {
  let sys: TestSystem
  let key: string
  let ep: any
  const stripe = new Stripe('sk_test_unused')
  before(async () => {
    sys = await startSystem({ services: ['webhooks'], workers: false })
    key = await signup(sys)
    ep = await createEndpoint(sys, key)
  })
  after(async () => sys?.stop())

  async function send(headers: Record<string, string>, body = payload): Promise<number> {
    const r = await capture(ep.url, { body, headers: { 'content-type': 'application/json', ...headers } })
    assert.equal(r.status, 200)
    return (await get(api(sys, `/endpoints/${ep.endpoint_id}/requests?limit=1`), { key })).json.requests[0].id
  }
  const verify = (id: number, secret: string, scheme?: string, extra: Record<string, unknown> = {}) =>
    post(api(sys, `/endpoints/${ep.endpoint_id}/requests/${id}/verify`), { secret, ...(scheme ? { scheme } : {}), ...extra }, { key })
  const stored = async (id: number) => (await get(api(sys, `/endpoints/${ep.endpoint_id}/requests/${id}`), { key })).json

  it('GitHub X-Hub-Signature-256: valid, wrong secret, body changed; the returned body verifies with octokit', async () => {
    const secret = 'gh-secret'
    const sig = await githubSign(secret, payload)
    const id = await send({ 'X-GitHub-Event': 'push', 'X-Hub-Signature-256': sig })
    const ok = await verify(id, secret)
    assert.equal(ok.status, 200)
    assert.equal(ok.json.valid, true)
    assert.equal(ok.json.scheme, 'github')
    const s = await stored(id)
    assert.equal(await githubVerify(secret, s.body, s.headers['x-hub-signature-256']), true)
    const wrong = await verify(id, 'other')
    assert.equal(wrong.json.valid, false)
    assert.match(wrong.json.reason, /wrong secret, or the body was changed/)
    const changed = await send({ 'X-Hub-Signature-256': sig }, payload.replace('1999', '1998'))
    assert.equal((await verify(changed, secret)).json.valid, false)
  })

  it('Stripe-Signature: valid, outside tolerance, several signatures during rotation; constructEvent accepts the returned body', async () => {
    const secret = 'whsec_stripe_test_secret'
    const header = stripe.webhooks.generateTestHeaderString({ payload, secret })
    const id = await send({ 'Stripe-Signature': header })
    const ok = await verify(id, secret)
    assert.equal(ok.json.valid, true, ok.text)
    assert.equal(ok.json.scheme, 'stripe')
    assert.equal(ok.json.tolerance_seconds, 300)
    const s = await stored(id)
    assert.equal((stripe.webhooks.constructEvent(s.body, s.headers['stripe-signature'], secret) as any).event_type, 'transaction.completed')

    const old = stripe.webhooks.generateTestHeaderString({ payload, secret, timestamp: Math.floor(Date.now() / 1000) - 600 })
    const late = await verify(await send({ 'Stripe-Signature': old }), secret)
    assert.equal(late.json.valid, false)
    assert.match(late.json.reason, /outside the sender's tolerance: signed 6\d\d s before it was received \(tolerance 300 s\)/)

    // Rotation: Stripe sends one v1 per active secret.
    const t = Math.floor(Date.now() / 1000)
    const v1 = (sec: string) => stripe.webhooks.generateTestHeaderString({ payload, secret: sec, timestamp: t }).split('v1=')[1]
    const rotating = `t=${t},v1=${v1('whsec_old')},v1=${v1(secret)}`
    const rot = await verify(await send({ 'Stripe-Signature': rotating }), secret)
    assert.equal(rot.json.valid, true)
    assert.equal(rot.json.signatures, 2)
    assert.equal(rot.json.matched_signature, 2)
    assert.match(rot.json.reason, /rotating/)
    const none = await verify(await send({ 'Stripe-Signature': rotating }), 'whsec_neither')
    assert.equal(none.json.valid, false)
    assert.match(none.json.reason, /none of the 2 signatures matched/)
  })

  it('Paddle-Signature: valid (and accepted by the Paddle SDK), wrong secret, body changed', async () => {
    const secret = 'pdl_ntfset_01h_secret'
    const ts = Math.floor(Date.now() / 1000)
    // Paddle's documented scheme: h1 = HMAC-SHA256(secret, `${ts}:${body}`); the SDK only verifies.
    const header = (body: string) => `ts=${ts};h1=${createHmac('sha256', secret).update(`${ts}:${body}`).digest('hex')}`
    const id = await send({ 'Paddle-Signature': header(payload) })
    const ok = await verify(id, secret)
    assert.equal(ok.json.valid, true, ok.text)
    assert.equal(ok.json.scheme, 'paddle')
    const s = await stored(id)
    assert.equal(await new Paddle('pdl_sdbx_apikey_unused').webhooks.isSignatureValid(s.body, secret, s.headers['paddle-signature']), true)
    assert.equal((await verify(id, 'pdl_wrong')).json.valid, false)
    const changed = await send({ 'Paddle-Signature': header(payload) }, payload.replace('EUR', 'USD'))
    assert.equal((await verify(changed, secret)).json.valid, false)
  })

  it('Standard Webhooks: valid (standardwebhooks verify accepts it), rotation, stale timestamp', async () => {
    const secret = 'whsec_' + Buffer.from('a very secret standard key!').toString('base64')
    const wh = new StandardWebhook(secret)
    const now = new Date()
    const sig = wh.sign('msg_1', now, payload)
    const headers = { 'webhook-id': 'msg_1', 'webhook-timestamp': String(Math.floor(now.getTime() / 1000)), 'webhook-signature': sig }
    const id = await send(headers)
    const ok = await verify(id, secret)
    assert.equal(ok.json.valid, true, ok.text)
    assert.equal(ok.json.scheme, 'standard-webhooks')
    const s = await stored(id)
    assert.deepEqual(wh.verify(s.body, s.headers), JSON.parse(payload))

    const other = new StandardWebhook('whsec_' + Buffer.from('the previous key').toString('base64')).sign('msg_1', now, payload)
    const rot = await verify(await send({ ...headers, 'webhook-signature': `${other} ${sig}` }), secret)
    assert.equal(rot.json.valid, true)
    assert.equal(rot.json.matched_signature, 2)

    const then = new Date(now.getTime() - 3_600_000)
    const stale = await verify(
      await send({ 'webhook-id': 'msg_2', 'webhook-timestamp': String(Math.floor(then.getTime() / 1000)), 'webhook-signature': wh.sign('msg_2', then, payload) }),
      secret,
    )
    assert.equal(stale.json.valid, false)
    assert.match(stale.json.reason, /outside the sender's tolerance/)
  })

  it('Svix (svix-id, svix-timestamp, svix-signature): valid, signed and verified by the svix package; wrong secret, stale, rotation', async () => {
    const secret = 'whsec_' + Buffer.from('svix endpoint secret, 24+ bytes').toString('base64')
    const wh = new SvixWebhook(secret)
    const now = new Date()
    const headers = { 'svix-id': 'msg_2Lx', 'svix-timestamp': String(Math.floor(now.getTime() / 1000)), 'svix-signature': wh.sign('msg_2Lx', now, payload) }
    const id = await send(headers)
    const ok = await verify(id, secret)
    assert.equal(ok.status, 200, ok.text)
    assert.equal(ok.json.valid, true, ok.text)
    assert.equal(ok.json.scheme, 'svix')
    assert.equal(ok.json.tolerance_seconds, 300)
    // Asking for Standard Webhooks (the same scheme) on a Svix delivery answers it as Svix.
    const asStandard = await verify(id, secret, 'standard-webhooks')
    assert.equal(asStandard.status, 200, asStandard.text)
    assert.equal(asStandard.json.scheme, 'svix')
    assert.equal(asStandard.json.valid, true)
    assert.equal((await verify(id, secret, 'svix')).json.valid, true)
    const s = await stored(id)
    assert.deepEqual(wh.verify(s.body, s.headers), JSON.parse(payload))

    const wrong = await verify(id, 'whsec_' + Buffer.from('another svix secret').toString('base64'))
    assert.equal(wrong.json.valid, false)
    assert.match(wrong.json.reason, /wrong secret/)
    const older = new SvixWebhook('whsec_' + Buffer.from('the old svix secret').toString('base64')).sign('msg_2Lx', now, payload)
    const rot = await verify(await send({ ...headers, 'svix-signature': `${older} ${headers['svix-signature']}` }), secret)
    assert.equal(rot.json.valid, true)
    assert.equal(rot.json.matched_signature, 2)
    const then = new Date(now.getTime() - 3_600_000)
    const stale = await verify(await send({ 'svix-id': 'msg_3', 'svix-timestamp': String(Math.floor(then.getTime() / 1000)), 'svix-signature': wh.sign('msg_3', then, payload) }), secret)
    assert.equal(stale.json.valid, false)
    assert.match(stale.json.reason, /outside the sender's tolerance/)

    const noId = await verify(await send({ 'svix-timestamp': headers['svix-timestamp'], 'svix-signature': headers['svix-signature'] }), secret)
    assert.equal(noId.status, 400)
    assert.equal(noId.json.error, 'svix-id and svix-timestamp headers are required for Svix')
  })

  it('Shopify X-Shopify-Hmac-Sha256 (signed by @shopify/shopify-api): valid, and the stored request passes shopify.webhooks.validate; wrong secret', async () => {
    const secret = 'shpss_e2e_client_secret'
    const headers = {
      'X-Shopify-Hmac-Sha256': shopifyHmac(payload, secret), 'X-Shopify-Topic': 'orders/create', 'X-Shopify-API-Version': '2024-10',
      'X-Shopify-Shop-Domain': 'demo.myshopify.com', 'X-Shopify-Webhook-Id': 'b54557e4-bdd9-4b37-8a5f-bf7d70bcd043', 'X-Shopify-Event-Id': 'e1',
    }
    const id = await send(headers)
    const ok = await verify(id, secret)
    assert.equal(ok.status, 200, ok.text)
    assert.deepEqual([ok.json.valid, ok.json.scheme, ok.json.signed_at, ok.json.tolerance_seconds, ok.json.signed_url], [true, 'shopify', null, null, null])
    const s = await stored(id)
    const shopify = shopifyApi({ apiKey: 'k', apiSecretKey: secret, scopes: [], hostName: 'app.example.com', apiVersion: ApiVersion.October24, isEmbeddedApp: false, logger: { level: LogSeverity.Error } })
    const check = await shopify.webhooks.validate({ rawBody: s.body, rawRequest: new Request(ep.url, { method: 'POST', headers: s.headers }) })
    assert.equal(check.valid, true)
    const wrong = await verify(id, 'shpss_other')
    assert.equal(wrong.json.valid, false)
    assert.match(wrong.json.reason, /wrong secret/)
  })

  it('Twilio form POST (signed by the twilio library): the capture URL by default; behind a proxy, the signed URL given as url', async () => {
    const token = 'twilio_e2e_auth_token'
    const form = 'AccountSid=AC123&From=%2B15557654321&To=%2B15551234567&Body=Hi+there+%F0%9F%91%8B&NumMedia=0'
    const params = Object.fromEntries(new URLSearchParams(form))
    const direct = `${ep.url}?tenant=7`
    const sendForm = async (signedFor: string) => {
      const r = await capture(direct, { body: form, headers: { 'content-type': 'application/x-www-form-urlencoded', 'X-Twilio-Signature': twilio.getExpectedTwilioSignature(token, signedFor, params) } })
      assert.equal(r.status, 200)
      return (await get(api(sys, `/endpoints/${ep.endpoint_id}/requests?limit=1`), { key })).json.requests[0].id as number
    }
    const id = await sendForm(direct)
    const ok = await verify(id, token)
    assert.equal(ok.status, 200, ok.text)
    assert.deepEqual([ok.json.valid, ok.json.scheme, ok.json.signed_url], [true, 'twilio', direct], ok.text)
    assert.equal(twilio.validateRequest(token, (await stored(id)).headers['x-twilio-signature'], direct, params), true)

    const publicUrl = `https://hooks.example.com/wh/hook/${ep.endpoint_id}?tenant=7`
    const proxied = await sendForm(publicUrl)
    const guess = await verify(proxied, token)
    assert.equal(guess.json.valid, false)
    assert.equal(guess.json.signed_url, direct)
    assert.match(guess.json.reason, /or Twilio signed another URL than .*\(pass the URL configured at Twilio, with its query string, as `url`\)/)
    const given = await verify(proxied, token, undefined, { url: publicUrl })
    assert.deepEqual([given.json.valid, given.json.signed_url], [true, publicUrl], given.text)

    // Without `url`, the URL comes from the Host header; one that makes no URL is the caller's 400.
    const json = JSON.stringify({ secret: token })
    const odd = await rawRequest(api(sys, `/endpoints/${ep.endpoint_id}/requests/${id}/verify`), [
      `POST /api/v1/endpoints/${ep.endpoint_id}/requests/${id}/verify HTTP/1.1`, 'Host: not a host', `Authorization: Bearer ${key}`,
      'Content-Type: application/json', `Content-Length: ${Buffer.byteLength(json)}`, 'Connection: close',
    ], json)
    assert.equal(odd.status, 400, odd.body.toString())
    assert.match(JSON.parse(odd.body.toString()).error, /^the URL Twilio signed cannot be derived \(http:\/\/not a host\/hook\/.* is not a URL\): pass it as `url`$/)
  })

  it('Discord interaction (Ed25519): verified with the public key as secret; a bot token instead of the key is a 400', async () => {
    const kp = generateKeyPairSync('ed25519')
    const publicKey = Buffer.from(kp.publicKey.export({ format: 'jwk' }).x!, 'base64url').toString('hex')
    const ts = String(Math.floor(Date.now() / 1000))
    const interaction = JSON.stringify({ type: 1, id: '1', application_id: '2', token: 't', version: 1 })
    const sig = sign(null, Buffer.from(ts + interaction), kp.privateKey).toString('hex')
    const id = await send({ 'X-Signature-Ed25519': sig, 'X-Signature-Timestamp': ts }, interaction)
    const ok = await verify(id, publicKey)
    assert.equal(ok.status, 200, ok.text)
    assert.deepEqual([ok.json.valid, ok.json.scheme], [true, 'discord'], ok.text)
    const s = await stored(id)
    assert.equal(await discordVerifyKey(s.body, s.headers['x-signature-ed25519'], s.headers['x-signature-timestamp'], publicKey), true)
    const token = await verify(id, 'MTIzNDU2Nzg5.bot-token')
    assert.equal(token.status, 400)
    assert.match(token.json.error, /secret must be the application's public key for Discord: 64 hex digits/)
  })

  it('bad url or oversized secret → 400 naming the field, for any scheme', async () => {
    const id = await send({ 'X-Shopify-Hmac-Sha256': shopifyHmac(payload, 's') })
    for (const url of ['ftp://example.com/x', '/hook/relative', 'https://', `https://example.com/${'a'.repeat(2_100)}`]) {
      const r = await verify(id, 's', undefined, { url })
      assert.equal(r.status, 400, url)
      assert.match(r.json.error, /^url must be (an absolute http\(s\) URL|at most 2048 characters)$/)
    }
    const big = await verify(id, 'x'.repeat(1_001))
    assert.equal(big.status, 400)
    assert.equal(big.json.error, 'secret must be at most 1000 characters')
    const nonString = await post(api(sys, `/endpoints/${ep.endpoint_id}/requests/${id}/verify`), { secret: 's', url: 42 }, { key })
    assert.equal(nonString.status, 400)
    assert.equal(nonString.json.error, 'url must be a string')
    // The check itself still works on the same capture afterwards.
    assert.equal((await verify(id, 's')).json.valid, true)
  })

  it('/openapi.json documents the body of verify: secret (or public key), scheme with every sender, url', async () => {
    const doc = (await get(`${sys.root.webhooks}/openapi.json`)).json
    const schema = doc.paths['/api/v1/endpoints/{token}/requests/{id}/verify'].post.requestBody.content['application/json'].schema
    assert.deepEqual(schema.required, ['secret'])
    assert.deepEqual(schema.properties.scheme.enum, ['github', 'stripe', 'paddle', 'standard-webhooks', 'svix', 'shopify', 'slack', 'twilio', 'square', 'zoom', 'intercom', 'linear', 'discord', 'sendgrid'])
    assert.match(schema.properties.secret.description, /for discord the application's public key .* for sendgrid the verification key/)
    assert.deepEqual([schema.properties.url.type, schema.properties.url.maxLength], ['string', 2048])
    assert.match(schema.properties.url.description, /For twilio and square, which sign the URL they call/)
  })

  it('bad input: no signature header, malformed header, missing secret, unknown scheme → 400', async () => {
    const plain = await send({})
    const r = await verify(plain, 's')
    assert.equal(r.status, 400)
    assert.match(r.json.error, /No signature header found \(looked for .*X-Shopify-Hmac-Sha256.*X-Signature-Ed25519/)
    const mal = await verify(await send({ 'Stripe-Signature': 'garbage' }), 's')
    assert.equal(mal.status, 400)
    assert.match(mal.json.error, /Stripe-Signature header is malformed/)
    const noSecret = await post(api(sys, `/endpoints/${ep.endpoint_id}/requests/${plain}/verify`), {}, { key })
    assert.equal(noSecret.status, 400)
    assert.match(noSecret.json.error, /secret is required/)
    const scheme = await verify(plain, 's', 'mailchimp')
    assert.equal(scheme.status, 400)
    assert.match(scheme.json.error, /scheme must be one of/)
  })
})
