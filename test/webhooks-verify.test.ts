import assert from 'node:assert/strict'
import { createHmac } from 'node:crypto'
import { sign as githubSign, verify as githubVerify } from '@octokit/webhooks-methods'
import { Paddle } from '@paddle/paddle-node-sdk'
import { Webhook as StandardWebhook } from 'standardwebhooks'
import Stripe from 'stripe'
import { Webhook as SvixWebhook } from 'svix'
import { startSystem, type TestSystem } from './helpers/system.ts'
import { get, post } from './helpers/http.ts'
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
  const verify = (id: number, secret: string, scheme?: string) => post(api(sys, `/endpoints/${ep.endpoint_id}/requests/${id}/verify`), { secret, ...(scheme ? { scheme } : {}) }, { key })
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

  it('bad input: no signature header, malformed header, missing secret, unknown scheme → 400', async () => {
    const plain = await send({})
    const r = await verify(plain, 's')
    assert.equal(r.status, 400)
    assert.match(r.json.error, /No signature header found/)
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
