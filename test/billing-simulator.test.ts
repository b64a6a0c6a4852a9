// The Stripe simulator as the real `stripe` client sees it (errors, list, idempotency), its hosted
// page (escaped), and the embedded default: `start` without Stripe keys runs one.
import assert from 'node:assert/strict'
import { freePort } from './helpers/ports.ts'
import Stripe from 'stripe'
import { parseStripeForm } from '../src/embedded/stripe-simulator/form.ts'
import { startStripeSimulator, type StripeSimulator } from '../src/embedded/stripe-simulator/server.ts'
import { loadConfig } from '../src/platform/config.ts'
import { ensureInfra } from '../src/embedded/index.ts'

const params = (name = 'Invoice API Pro'): Stripe.Checkout.SessionCreateParams => ({
  mode: 'subscription',
  line_items: [{ quantity: 1, price_data: { currency: 'usd', unit_amount: 1900, recurring: { interval: 'month' }, product_data: { name } } }],
  metadata: { plan: 'pro' },
  success_url: 'http://127.0.0.1:1/ok?session_id={CHECKOUT_SESSION_ID}',
})

describe('billing: Stripe simulator', () => {
  let sim: StripeSimulator
  let stripe: Stripe
  before(async () => {
    sim = await startStripeSimulator()
    const u = new URL(sim.url)
    stripe = new Stripe(sim.secretKey, { host: u.hostname, port: u.port, protocol: 'http', maxNetworkRetries: 0 })
  })
  after(async () => sim?.close())

  it('parses Stripe form encoding (nested hashes and indexed arrays)', () => {
    assert.deepEqual(parseStripeForm('a=1&metadata[k]=v&line_items[0][price_data][currency]=usd&line_items[1][quantity]=2&__proto__[x]=1'), {
      a: '1',
      metadata: { k: 'v' },
      line_items: [{ price_data: { currency: 'usd' } }, { quantity: '2' }],
    })
    assert.equal(({} as any).x, undefined)
  })

  it('creates, retrieves, lists and expires sessions through the stripe client', async () => {
    const s = await stripe.checkout.sessions.create(params())
    assert.match(s.id, /^cs_test_/)
    assert.equal(s.status, 'open')
    assert.equal(s.amount_total, 1900)
    assert.deepEqual((await stripe.checkout.sessions.retrieve(s.id)).metadata, { plan: 'pro' })
    const open = await stripe.checkout.sessions.list({ status: 'open', limit: 100 })
    assert.ok(open.data.some((x) => x.id === s.id))
    const expired = await stripe.checkout.sessions.expire(s.id)
    assert.equal(expired.status, 'expired')
    assert.ok(!(await stripe.checkout.sessions.list({ status: 'open', limit: 100 })).data.some((x) => x.id === s.id))
  })

  it('answers Stripe errors the client maps to its error classes', async () => {
    await assert.rejects(stripe.checkout.sessions.retrieve('cs_test_nope'), (e: any) => e instanceof Stripe.errors.StripeInvalidRequestError && e.statusCode === 404)
    await assert.rejects(stripe.checkout.sessions.create({ ...params(), success_url: undefined } as any), (e: any) => e.statusCode === 400 && e.param === 'success_url')
    const u = new URL(sim.url)
    const wrong = new Stripe('sk_test_wrong', { host: u.hostname, port: u.port, protocol: 'http', maxNetworkRetries: 0 })
    await assert.rejects(wrong.checkout.sessions.list(), (e: any) => e instanceof Stripe.errors.StripeAuthenticationError)
    sim.fault = 'error'
    await assert.rejects(stripe.checkout.sessions.list(), (e: any) => e instanceof Stripe.errors.StripeAPIError && e.statusCode === 503)
    sim.fault = 'disconnect'
    await assert.rejects(stripe.checkout.sessions.list(), (e: any) => e instanceof Stripe.errors.StripeConnectionError)
    sim.fault = 'none'
  })

  it('control endpoints switch faults by hand', async () => {
    const ctl = (path: string, body: string) => fetch(`${sim.url}/_simulator/${path}`, { method: 'POST', body, headers: { 'content-type': 'application/x-www-form-urlencoded' } })
    assert.equal((await ctl('fault', 'mode=bogus')).status, 400)
    assert.deepEqual(await (await ctl('fault', 'mode=error')).json(), { fault: 'error' })
    await assert.rejects(stripe.checkout.sessions.list(), (e: any) => e.statusCode === 503)
    await ctl('fault', 'mode=none')
    assert.equal((await stripe.checkout.sessions.list()).object, 'list')
    assert.deepEqual(await (await ctl('drop_webhooks', 'drop=true')).json(), { drop_webhooks: true })
    assert.equal(sim.dropWebhooks, true)
    await ctl('drop_webhooks', 'drop=false')
  })

  it('an idempotency key replays the first answer', async () => {
    const a = await stripe.checkout.sessions.create(params(), { idempotencyKey: 'same-key' })
    const b = await stripe.checkout.sessions.create(params('Other'), { idempotencyKey: 'same-key' })
    assert.equal(a.id, b.id)
  })

  it('hosted page shows plan and price, escapes what it shows, and Pay completes once', async () => {
    const s = await stripe.checkout.sessions.create({ ...params('<script>alert(1)</script>'), customer_email: 'a"b@example.com' })
    const html = await (await fetch(s.url!)).text()
    assert.match(html, /id="plan">pro</)
    assert.match(html, /\$19\.00/)
    assert.ok(!html.includes('<script>alert'), 'product name escaped')
    assert.ok(html.includes('&lt;script&gt;'))
    const paid = await fetch(s.url!, { method: 'POST', redirect: 'manual' })
    assert.equal(paid.status, 303)
    assert.equal(paid.headers.get('location'), `http://127.0.0.1:1/ok?session_id=${s.id}`)
    const again = await fetch(s.url!, { method: 'POST', redirect: 'manual' })
    assert.equal(again.status, 400)
    const done = await stripe.checkout.sessions.retrieve(s.id)
    assert.equal(done.payment_status, 'paid')
    assert.match(String(done.subscription), /^sub_/)
    assert.equal((await stripe.subscriptions.retrieve(String(done.subscription))).status, 'active')
    assert.equal(sim.events.filter((e) => e.data.object.id === s.id && e.type === 'checkout.session.completed').length, 1)
  })

  it('delivers events with a signature the stripe library verifies', async () => {
    const got: Array<{ body: string; sig: string }> = []
    const { createServer } = await import('node:http')
    const server = createServer((req, res) => {
      let body = ''
      req.on('data', (c) => (body += c)).on('end', () => {
        got.push({ body, sig: String(req.headers['stripe-signature']) })
        res.end('{}')
      })
    })
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
    sim.webhookUrls = [`http://127.0.0.1:${(server.address() as any).port}/hook`]
    try {
      const s = await stripe.checkout.sessions.create(params())
      sim.pay(s.id)
      await sim.settled()
      assert.equal(got.length, 1)
      const event = stripe.webhooks.constructEvent(got[0]!.body, got[0]!.sig, sim.webhookSecret)
      assert.equal(event.type, 'checkout.session.completed')
      assert.throws(() => stripe.webhooks.constructEvent(got[0]!.body, got[0]!.sig, 'whsec_other'))
    } finally {
      sim.webhookUrls = []
      server.close()
    }
  })

  it('`start` without Stripe keys runs the simulator and hands its address to children', async () => {
    const config = loadConfig({ NODE_ENV: 'test', REDIS_URL: process.env.TEST_REDIS_URL, MONGO_URL: process.env.TEST_MONGO_URL })
    const infra = await ensureInfra(config)
    try {
      assert.match(infra.stripe!, /^http:\/\/127\.0\.0\.1:\d+$/)
      assert.equal(infra.env.STRIPE_API_BASE, infra.stripe)
      assert.match(infra.env.STRIPE_SECRET_KEY!, /^sk_test_/)
      assert.match(infra.env.STRIPE_WEBHOOK_SECRET!, /^whsec_/)
    } finally {
      await infra.stop()
    }
    const prod = await ensureInfra(loadConfig({ NODE_ENV: 'production', REDIS_URL: process.env.TEST_REDIS_URL, MONGO_URL: process.env.TEST_MONGO_URL }))
    assert.equal(prod.stripe, undefined, 'never a simulator in production')
    await prod.stop()
  })

  it('`start` runs the simulator on the key and port it is given; the official client uses them', async () => {
    const port = await freePort()
    const key = 'sk_test_my_local_key_123'
    const env = { NODE_ENV: 'test', REDIS_URL: process.env.TEST_REDIS_URL, MONGO_URL: process.env.TEST_MONGO_URL }
    const infra = await ensureInfra(loadConfig({ ...env, STRIPE_SIMULATOR_KEY: key, STRIPE_SIMULATOR_PORT: String(port) }))
    try {
      assert.equal(infra.stripe, `http://127.0.0.1:${port}`)
      assert.equal(infra.env.STRIPE_SECRET_KEY, key)
      const client = new Stripe(key, { host: '127.0.0.1', port, protocol: 'http', maxNetworkRetries: 0 })
      const s = await client.checkout.sessions.create(params('Given key'))
      assert.equal((await client.checkout.sessions.retrieve(s.id)).id, s.id)
    } finally {
      await infra.stop()
    }
    assert.throws(() => loadConfig({ ...env, STRIPE_SIMULATOR_KEY: 'pk_live_nope' }), /STRIPE_SIMULATOR_KEY/)
    assert.throws(() => loadConfig({ ...env, STRIPE_SIMULATOR_PORT: 'x' }), /STRIPE_SIMULATOR_PORT/)
  })
})
