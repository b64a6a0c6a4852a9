// POST /api/v1/checkout and the Stripe webhook, on the invoice service: errors, bad input, Stripe
// outages, forged and replayed events, a lost webhook caught by the sweep, and tenancy.
import assert from 'node:assert/strict'
import { clock } from '../src/platform/clock.ts'
import { enqueue } from '../src/platform/queue/job.ts'
import { QueueName } from './helpers/queue-names.ts'
import { paymentReconcileJob } from '../jobs/payment-reconcile.ts'
import { checkout, countPlanChanges, countSessions, pay, planOf, sendWebhook, signed, signup } from './helpers/billing.ts'
import { until } from './helpers/wait.ts'
import { call, get } from './helpers/http.ts'
import { startSystem, type TestSystem } from './helpers/system.ts'

const INVALID_PLAN = 'Invalid plan. Must be one of: starter, pro, business'
const UNAVAILABLE = 'Payment system unavailable, please try again later'

describe('billing: checkout and webhook (invoice)', function () {
  this.timeout(60_000)
  let sys: TestSystem
  before(async () => {
    sys = await startSystem({ services: ['invoice'] })
    await sys.platform.queues.listen(QueueName.PaymentReconcile)
  })
  after(async () => sys?.stop())
  afterEach(() => {
    clock.reset()
    sys.stripe!.fault = 'none'
    sys.stripe!.dropWebhooks = false
  })

  /** Run a payment-reconcile job through the real queue and worker; its result. */
  async function runJob(payload: Parameters<typeof enqueue<typeof paymentReconcileJob.schema>>[2]) {
    const job = await enqueue(sys.platform, paymentReconcileJob, payload)
    const settled = await sys.platform.queues.nextSettled(QueueName.PaymentReconcile, job.id!, 20_000)
    assert.equal(settled?.event, 'completed', JSON.stringify(settled))
    return (settled as { returnvalue: any }).returnvalue
  }

  /** A paid session whose checkout.session.completed event was not delivered. */
  async function paidWithoutWebhook() {
    const { key, account } = await signup(sys, 'invoice')
    const res = await checkout(sys, 'invoice', key, 'pro')
    assert.equal(res.status, 200, res.text)
    sys.stripe!.dropWebhooks = true
    assert.equal((await pay(res.json.checkout_url)).status, 303)
    sys.stripe!.dropWebhooks = false
    const event = sys.stripe!.events.at(-1)!
    assert.equal(event.type, 'checkout.session.completed')
    return { key, account, event, payload: JSON.stringify(event) }
  }

  describe('POST /checkout', () => {
    it('answers checkout_url and plan, and records the session for the account', async () => {
      const { key, account } = await signup(sys, 'invoice')
      const res = await checkout(sys, 'invoice', key, 'business')
      assert.equal(res.status, 200, res.text)
      assert.deepEqual(Object.keys(res.json).sort(), ['checkout_url', 'plan'])
      assert.equal(res.json.plan, 'business')
      const id = /\/c\/pay\/(cs_test_\w+)$/.exec(res.json.checkout_url)![1]!
      const session = sys.stripe!.sessions.get(id)!
      assert.equal(session.mode, 'subscription')
      assert.equal(session.client_reference_id, account._id)
      assert.deepEqual(session.metadata, { account_id: account._id, service: 'invoice', plan: 'business' })
      assert.equal(session.amount_total, 3900)
      assert.equal(await countSessions(sys, account._id), 1)
      assert.equal(await planOf(sys, account._id), 'free', 'nothing changes before payment')
    })

    it('invalid plan → 400 with the seeded message, and nothing is created', async () => {
      const { key, account } = await signup(sys, 'invoice')
      const before = sys.stripe!.sessions.size
      const bodies: unknown[] = [
        {}, { plan: 'free' }, { plan: 'PRO' }, { plan: ' pro' }, { plan: '' }, { plan: 5 }, { plan: null }, { plan: ['pro'] },
        { plan: { name: 'pro' } }, { plan: 'プロ' }, { plan: 'x'.repeat(100_000) }, { plan: 'enterprise' }, ['pro'],
      ]
      for (const body of bodies) {
        const res = await call('POST', `${sys.url.invoice}/checkout`, { json: body, key })
        assert.equal(res.status, 400, `${JSON.stringify(body).slice(0, 40)} → ${res.status}`)
        assert.deepEqual(res.json, { error: INVALID_PLAN })
      }
      const empty = await call('POST', `${sys.url.invoice}/checkout`, { key, headers: { 'content-length': '0' } })
      assert.equal(empty.status, 400)
      assert.deepEqual(empty.json, { error: INVALID_PLAN })
      // Not JSON objects at all: the JSON layer refuses them before the schema sees them.
      for (const raw of ['{"plan": "pro"', '"pro"', '42', 'null', 'plan=pro']) {
        const res = await call('POST', `${sys.url.invoice}/checkout`, { raw, key })
        assert.equal(res.status, 400, raw)
        assert.equal(typeof res.json.error, 'string', raw)
      }
      assert.equal(sys.stripe!.sessions.size, before)
      assert.equal(await countSessions(sys, account._id), 0)
    })

    it('missing, malformed or unknown key → 401 JSON, before anything else', async () => {
      for (const headers of [{} as Record<string, string>, { authorization: 'Bearer dm_nope' }, { authorization: 'Basic abc' }, { authorization: 'Bearer fb_' + 'a'.repeat(40) }]) {
        const res = await call('POST', `${sys.url.invoice}/checkout`, { json: { plan: 'pro' }, headers })
        assert.equal(res.status, 401)
        assert.deepEqual(res.json, { error: 'Unauthorized: invalid or missing API key' })
      }
      const invalidToo = await call('POST', `${sys.url.invoice}/checkout`, { json: { plan: 'nope' } })
      assert.equal(invalidToo.status, 401)
    })

    for (const fault of ['error', 'disconnect'] as const) {
      it(`Stripe ${fault === 'error' ? 'failing (503s)' : 'unreachable'} → 503 after retries, and nothing changes`, async () => {
        const { key, account } = await signup(sys, 'invoice')
        const before = sys.stripe!.sessions.size
        sys.stripe!.fault = fault
        const res = await checkout(sys, 'invoice', key, 'pro')
        assert.equal(res.status, 503)
        assert.deepEqual(res.json, { error: UNAVAILABLE })
        assert.ok(Number(res.headers.get('retry-after')) > 0)
        assert.equal(sys.stripe!.sessions.size, before)
        assert.equal(await countSessions(sys, account._id), 0)
        assert.equal(await planOf(sys, account._id), 'free')
        sys.stripe!.fault = 'none'
        assert.equal((await checkout(sys, 'invoice', key, 'pro')).status, 200, 'works again once Stripe is back')
      })
    }

    it('concurrent checkouts each get their own session; none changes the plan', async () => {
      const { key, account } = await signup(sys, 'invoice')
      const results = await Promise.all(Array.from({ length: 8 }, () => checkout(sys, 'invoice', key, 'starter')))
      assert.deepEqual(results.map((r) => r.status), Array(8).fill(200))
      assert.equal(new Set(results.map((r) => r.json.checkout_url)).size, 8)
      assert.equal(await countSessions(sys, account._id), 8)
      assert.equal(await planOf(sys, account._id), 'free')
    })
  })

  describe('POST /billing/stripe-webhook', () => {
    it('invalid or missing signature → 400, and nothing changes', async () => {
      const { account, event, payload } = await paidWithoutWebhook()
      const cases: Array<[string, string | undefined]> = [
        ['missing header', undefined],
        ['wrong secret', signed(payload, 'whsec_not_the_secret')],
        ['garbage header', 'not-a-signature'],
        ['signature of another body', signed(payload.replace('"pro"', '"business"'), sys.stripe!.webhookSecret)],
        ['too old', signed(payload, sys.stripe!.webhookSecret, Math.floor(clock.nowMs() / 1000) - 3600)],
      ]
      for (const [name, sig] of cases) {
        const res = await sendWebhook(sys, 'invoice', payload, sig)
        assert.equal(res.status, 400, name)
        assert.equal(typeof res.json.error, 'string', name)
      }
      const tampered = await sendWebhook(sys, 'invoice', payload.replace(account._id, 'someone-else'), signed(payload, sys.stripe!.webhookSecret))
      assert.equal(tampered.status, 400)
      assert.equal(await sys.platform.db.collection('stripe_events').countDocuments({}), 0)
      // Nothing was queued that could change the plan later (the job id an accepted event gets).
      assert.equal(await sys.platform.queues.queue(QueueName.PaymentReconcile).getJobState(`evt-invoice-${event.id}`), 'unknown')
      assert.equal(await planOf(sys, account._id), 'free')
      assert.equal(await countPlanChanges(sys, account._id), 0)
    })

    it('the same event delivered twice (and five times at once) → one upgrade', async () => {
      const { account, event, payload } = await paidWithoutWebhook()
      const first = await sendWebhook(sys, 'invoice', payload, signed(payload, sys.stripe!.webhookSecret))
      assert.equal(first.status, 200, first.text)
      assert.deepEqual(first.json, { received: true })
      const again = await Promise.all(Array.from({ length: 5 }, () => sendWebhook(sys, 'invoice', payload, signed(payload, sys.stripe!.webhookSecret))))
      for (const r of again) assert.deepEqual(r.json, { received: true, duplicate: true })
      await until('the upgrade', async () => (await planOf(sys, account._id)) === 'pro')
      await until('the plan change record', async () => (await countPlanChanges(sys, account._id)) === 1)
      assert.equal(await sys.platform.db.collection('stripe_events').countDocuments({ event_id: event.id }), 1)
      // The job id an accepted event gets (the tests above check that refused events have none).
      assert.equal(await sys.platform.queues.queue(QueueName.PaymentReconcile).getJobState(`evt-invoice-${event.id}`), 'completed')
      // A replay of the reconcile itself is a no-op too.
      const r = await runJob({ kind: 'checkout', session_id: event.data.object.id })
      assert.equal(r.outcome, 'already_applied')
      await until('the plan change record', async () => (await countPlanChanges(sys, account._id)) === 1)
    })

    it('events for other services or of other types are acknowledged and ignored', async () => {
      const { account, event } = await paidWithoutWebhook()
      const other = { ...event, id: 'evt_other_service', data: { object: { ...event.data.object, metadata: { ...event.data.object.metadata, service: 'flags' } } } }
      const p1 = JSON.stringify(other)
      const r1 = await sendWebhook(sys, 'invoice', p1, signed(p1, sys.stripe!.webhookSecret))
      assert.deepEqual(r1.json, { received: true, handled: false })
      const p2 = JSON.stringify({ ...event, id: 'evt_other_type', type: 'invoice.paid' })
      const r2 = await sendWebhook(sys, 'invoice', p2, signed(p2, sys.stripe!.webhookSecret))
      assert.deepEqual(r2.json, { received: true, handled: false })
      // Neither was queued (the job id an accepted event gets), so nothing can change the plan later.
      const queue = sys.platform.queues.queue(QueueName.PaymentReconcile)
      for (const id of ['evt_other_service', 'evt_other_type']) assert.equal(await queue.getJobState(`evt-invoice-${id}`), 'unknown', id)
      assert.equal(await planOf(sys, account._id), 'free')
    })

    it('a body over 512 KiB → 413', async () => {
      const big = JSON.stringify({ id: 'evt_big', pad: 'x'.repeat(600 * 1024) })
      const res = await sendWebhook(sys, 'invoice', big, signed(big, sys.stripe!.webhookSecret))
      assert.equal(res.status, 413)
      assert.equal(typeof res.json.error, 'string')
    })
  })

  describe('reconciliation', () => {
    it('webhook dropped → the sweep upgrades once the session is a few minutes old', async () => {
      const { key, account } = await paidWithoutWebhook()
      assert.equal(await planOf(sys, account._id), 'free')
      const young = await runJob({ kind: 'sweep' })
      assert.deepEqual(young, {}, 'a session younger than BILLING_SWEEP_AFTER_MS is left to its webhook')
      assert.equal(await planOf(sys, account._id), 'free')

      clock.advance(sys.config.BILLING_SWEEP_AFTER_MS + 1_000)
      // (Other tests' sessions in this database are swept too: count at least ours.)
      const swept = await runJob({ kind: 'sweep' })
      assert.ok(swept.upgraded >= 1, JSON.stringify(swept))
      assert.equal(await planOf(sys, account._id), 'pro')
      assert.equal((await get(`${sys.url.invoice}/usage`, { key })).json.monthly_limit, 1_000)
      assert.equal((await runJob({ kind: 'sweep' })).upgraded, undefined, 'a completed session is not swept again')
      await until('the plan change record', async () => (await countPlanChanges(sys, account._id)) === 1)
    })

    it('an unpaid session is left open by the sweep; an expired one is closed', async () => {
      const { key, account } = await signup(sys, 'invoice')
      const res = await checkout(sys, 'invoice', key, 'starter')
      const id = /(cs_test_\w+)$/.exec(res.json.checkout_url)![1]!
      clock.advance(sys.config.BILLING_SWEEP_AFTER_MS + 1_000)
      const swept = await runJob({ kind: 'sweep' })
      assert.ok(swept.not_paid >= 1, JSON.stringify(swept))
      const doc = () => sys.platform.db.collection('checkout_sessions').findOne({ _id: id as any })
      assert.equal((await doc())!.status, 'open')
      assert.ok((await doc())!.checked_at.getTime() > (await doc())!.created_at.getTime(), 'checked by the sweep')
      await sys.platform.stripe!.checkout.sessions.expire(id)
      assert.ok((await runJob({ kind: 'sweep' })).expired >= 1)
      assert.equal((await sys.platform.db.collection('checkout_sessions').findOne({ _id: id as any }))!.status, 'expired')
      assert.equal(await planOf(sys, account._id), 'free')
    })

    it("another account's session never upgrades this one", async () => {
      const a = await signup(sys, 'invoice')
      const b = await signup(sys, 'invoice')
      // Both start a checkout; only A pays.
      const ca = await checkout(sys, 'invoice', a.key, 'business')
      const cb = await checkout(sys, 'invoice', b.key, 'starter')
      assert.equal(cb.status, 200)
      await pay(ca.json.checkout_url)
      await until("A's upgrade", async () => (await planOf(sys, a.account._id)) === 'business')
      assert.equal(await planOf(sys, b.account._id), 'free')

      // A session made outside our checkout, whose metadata names B, is paid and announced.
      const forged = await sys.platform.stripe!.checkout.sessions.create({
        mode: 'subscription',
        line_items: [{ quantity: 1, price_data: { currency: 'usd', unit_amount: 100, recurring: { interval: 'month' }, product_data: { name: 'x' } } }],
        client_reference_id: b.account._id,
        metadata: { account_id: b.account._id, service: 'invoice', plan: 'business' },
        success_url: 'http://127.0.0.1/ok',
      })
      sys.stripe!.pay(forged.id)
      await sys.stripe!.settled()
      assert.equal((await runJob({ kind: 'checkout', session_id: forged.id })).outcome, 'unknown')

      // A's own session, re-labelled for B in Stripe, does not move to B either.
      const cbId = /(cs_test_\w+)$/.exec(cb.json.checkout_url)![1]!
      sys.stripe!.sessions.get(cbId)!.metadata.account_id = a.account._id
      sys.stripe!.dropWebhooks = true
      await pay(cb.json.checkout_url)
      assert.equal((await runJob({ kind: 'checkout', session_id: cbId })).outcome, 'mismatch')
      assert.equal(await planOf(sys, b.account._id), 'free')
      assert.equal(await planOf(sys, a.account._id), 'business')
      assert.equal(await countPlanChanges(sys, b.account._id), 0)
    })
  })
})
