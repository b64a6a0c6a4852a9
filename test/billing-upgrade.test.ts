// Plan upgrade end to end, for every service that sells plans: checkout → the hosted page in
// Debian chromium → Pay → signed webhook → payment-reconcile → new plan and limits, same key.
// Then the subscription ends → back to free. Every service that sells plans must serve billing:
// one that stops is a failure here, not a skipped test.
import assert from 'node:assert/strict'
import type { Browser } from 'playwright-core'
import { INVOICE_LIMITS, PRICES_USD, type PaidPlan } from '../src/platform/plans.ts'
import { BILLED_SERVICES, checkout, countPlanChanges, planOf, signup } from './helpers/billing.ts'
import { until } from './helpers/wait.ts'
import { get, post } from './helpers/http.ts'
import { startSystem, type TestSystem } from './helpers/system.ts'
import { QueueName } from './helpers/queue-names.ts'
import { SERVICES } from '../src/services.ts'
import { launchChromium } from './helpers/browser.ts'


describe('billing: plan upgrade end to end', function () {
  this.timeout(120_000)
  let sys: TestSystem
  let browser: Browser
  before(async () => {
    sys = await startSystem({ services: BILLED_SERVICES })
    browser = await launchChromium()
  })
  after(async () => {
    await browser?.close()
    await sys?.stop()
  })

  it('every service that sells plans is registered and serves checkout (401 without a key, not 404)', async () => {
    assert.deepEqual(BILLED_SERVICES.filter((s) => !SERVICES.some((d) => d.name === s)), [])
    for (const service of BILLED_SERVICES) {
      const probe = await post(`${sys.root[service]}/api/v1/checkout`, { plan: 'pro' })
      assert.equal(probe.status, 401, `${service}: ${probe.status} ${probe.text}`)
    }
  })

  for (const service of BILLED_SERVICES) {
    describe(service, () => {
      const plan: PaidPlan = 'pro'

      it('checkout → hosted page → Pay → plan and limits change, key unchanged', async () => {
        const { key, account } = await signup(sys, service)
        const res = await checkout(sys, service, key, plan)
        assert.equal(res.status, 200, res.text)
        assert.equal(res.json.plan, plan)
        assert.match(res.json.checkout_url, /^http:\/\/127\.0\.0\.1:\d+\/c\/pay\/cs_test_/)

        const page = await browser.newPage()
        try {
          await page.goto(res.json.checkout_url)
          assert.equal(await page.textContent('#plan'), plan)
          assert.match((await page.textContent('#price'))!, new RegExp(`\\$${PRICES_USD[service][plan]}\\.00`))
          assert.equal(await page.textContent('#email'), account.email)
          const [back] = await Promise.all([page.waitForEvent('response', (r) => /\/api\/v1\/billing\/success/.test(r.url())), page.click('#pay')])
          assert.match((await page.textContent('h1'))!, /Payment received/)
          assert.match(back.headers()['content-security-policy']!, /^default-src 'none'; style-src 'sha256-/)
          // The page's own style applies under that policy (a refused style would leave the default serif font).
          assert.match(await page.evaluate(() => getComputedStyle(document.body).fontFamily), /system-ui/)
          // A way back to where the plan shows.
          assert.equal(await page.getAttribute('#back', 'href'), service === 'flags' ? '/' : '/account')
          assert.equal(new URL(await page.evaluate(() => (document.getElementById('back') as HTMLAnchorElement).href)).origin, sys.root[service])
        } finally {
          await page.close()
        }

        await until('the upgrade', async () => (await planOf(sys, account._id)) === plan)
        await until('the plan change record', async () => (await countPlanChanges(sys, account._id)) === 1)
        if (service === 'invoice') {
          const usage = await get(`${sys.url.invoice}/usage`, { key })
          assert.equal(usage.status, 200, 'the same key still works')
          assert.equal(usage.json.plan, plan)
          assert.equal(usage.json.monthly_limit, INVOICE_LIMITS[plan].monthly_limit)
          assert.equal(usage.json.remaining, INVOICE_LIMITS[plan].monthly_limit)
        }
        // The key is unchanged: it still authenticates, as the same account.
        const again = await checkout(sys, service, key, plan)
        assert.equal(again.status, 409)
        assert.equal(again.json.error, `Account is already on the ${plan} plan`)
      })

      it('cancel on the hosted page → the cancelled page with a way back; the plan stays', async () => {
        const { key, account } = await signup(sys, service)
        const res = await checkout(sys, service, key, plan)
        assert.equal(res.status, 200, res.text)
        const page = await browser.newPage()
        try {
          await page.goto(res.json.checkout_url)
          await Promise.all([page.waitForURL(/\/api\/v1\/billing\/cancel$/), page.click('#cancel')])
          assert.equal(await page.textContent('h1'), 'Checkout cancelled')
          assert.match((await page.textContent('#status'))!, /plan is unchanged/)
          await page.click('#back')
          await page.waitForURL(`${sys.root[service]}${service === 'flags' ? '/' : '/account'}`)
        } finally {
          await page.close()
        }
        assert.equal(await planOf(sys, account._id), 'free')
      })

      it('subscription ended (customer.subscription.deleted) → back to free, limits reapplied', async () => {
        const { key, account } = await signup(sys, service)
        const res = await checkout(sys, service, key, 'starter')
        assert.equal(res.status, 200, res.text)
        assert.equal((await fetch(res.json.checkout_url, { method: 'POST', redirect: 'manual' })).status, 303)
        await until('the upgrade', async () => (await planOf(sys, account._id)) === 'starter')
        const subId = (await sys.platform.db.collection('accounts').findOne({ _id: account._id as any }))!.stripe_subscription_id
        assert.match(subId, /^sub_/)

        await sys.platform.stripe!.subscriptions.cancel(subId)
        await until('the downgrade', async () => (await planOf(sys, account._id)) === 'free')
        await until('the plan change record', async () => (await countPlanChanges(sys, account._id)) === 2)
        if (service === 'invoice') {
          const usage = await get(`${sys.url.invoice}/usage`, { key })
          assert.equal(usage.json.plan, 'free')
          assert.equal(usage.json.monthly_limit, INVOICE_LIMITS.free.monthly_limit)
        }
      })

      it('a second upgrade cancels the first subscription, whose end does not downgrade', async () => {
        const { key, account } = await signup(sys, service)
        const first = await checkout(sys, service, key, 'starter')
        await fetch(first.json.checkout_url, { method: 'POST', redirect: 'manual' })
        await until('starter', async () => (await planOf(sys, account._id)) === 'starter')
        const second = await checkout(sys, service, key, 'business')
        assert.equal(second.status, 200, second.text)
        await fetch(second.json.checkout_url, { method: 'POST', redirect: 'manual' })
        await until('business', async () => (await planOf(sys, account._id)) === 'business')
        // The superseded subscription was cancelled in Stripe and its deletion event was handled.
        const statuses = () => [...sys.stripe!.subscriptions.values()].filter((s) => s.metadata.account_id === account._id).map((s) => s.status).sort()
        await until('the old subscription to be cancelled', async () => statuses().join() === 'active,canceled')
        await until('the deletion event to be delivered', async () =>
          sys.stripe!.deliveries.some((d) => d.type === 'customer.subscription.deleted' && d.url.startsWith(sys.root[service]!) && d.status === 200),
        )
        await sys.stripe!.settled()
        // The delivered event became a payment-reconcile job before Stripe got its 200: once none
        // waits or runs, it has been handled. (Delayed jobs are the minute sweep's next run.)
        const queue = sys.platform.queues.queue(QueueName.PaymentReconcile)
        await until('payment-reconcile to be idle', async () => {
          const c = await queue.getJobCounts('waiting', 'active', 'prioritized')
          return c.waiting + c.active + c.prioritized === 0
        })
        assert.equal(await planOf(sys, account._id), 'business')
      })
    })
  }
})
