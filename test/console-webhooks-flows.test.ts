// The webhooks console end to end in Chromium against a real webhook service with its workers
// (forwards, retries and recoveries really run against local HTTP targets): sign-up with the key
// shown once and sign-in, the account with its usage, the upgrade through the Stripe simulator's
// hosted page and the key replaced; endpoints created, paused, resumed and deleted; a
// dead-lettered delivery retried from the console arriving at the target, dead letters recovered
// since a time, and the inspection page opened from the console on its session. Screenshots of
// each screen go to docs/console/.
import assert from 'node:assert/strict'
import { cspViolations, shot, visit } from './helpers/console.ts'
import { SESSION_REVOKED } from '../src/platform/http/console-session.ts'
import { get } from './helpers/http.ts'
import { api, capture, signup, startTarget, waitFor, type Target } from './helpers/webhooks.ts'
import { openWebhooksConsole, startWebhooksConsole, type WebhooksPage, type WebhooksRig } from './helpers/webhooks-console.ts'

describe('webhooks console: every flow end to end (Chromium)', function () {
  this.timeout(90_000)
  let rig: WebhooksRig
  const pages: WebhooksPage[] = []
  let target: Target
  /** The local target answers 503 while true, 200 otherwise. */
  let failing = true
  before(async () => {
    // Two attempts 100 ms apart, then dead-lettered: a dead letter within a second.
    rig = await startWebhooksConsole({ env: { WEBHOOK_FORWARD_SCHEDULE_MS: '0,100', WEBHOOK_FORWARD_TIMEOUT_MS: '3000' } })
    target = await startTarget((_r, _i, res) => {
      res.statusCode = failing ? 503 : 200
      res.end(failing ? 'down for maintenance' : 'ok')
    })
  })
  after(async () => {
    for (const p of pages) {
      assert.deepEqual(await cspViolations(p.page), [], 'CSP violations')
      assert.deepEqual(p.errors.filter((e) => e.startsWith('uncaught')), [], 'uncaught exceptions')
    }
    await target?.close()
    await rig?.stop()
  })
  const open = async (key: string | null) => {
    const p = await openWebhooksConsole(rig, key)
    pages.push(p)
    return p
  }
  const apiGet = async (key: string, path: string) => (await get(api(rig.sys, path), { key })).json

  it('sign up: the key is shown once with a copy button, then opens a session; sign out; a wrong key is refused; sign in with the key', async () => {
    const { page, context } = await open(null)
    await context.grantPermissions(['clipboard-read', 'clipboard-write'])
    await page.goto('/')
    await page.waitForURL('**/sign-in')
    await page.getByLabel('E-mail').fill(`wh-console-${Date.now()}@example.com`)
    await shot(page, 'webhooks-sign-in')
    await page.getByRole('button', { name: 'Sign up' }).click()
    const key = (await page.locator('code.secret').textContent())!
    assert.match(key, /^wv_/)
    await page.getByRole('button', { name: 'Copy API key' }).click()
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), key)
    await page.getByRole('button', { name: /I have saved it/ }).click()
    await page.getByRole('heading', { level: 1, name: 'Endpoints' }).waitFor()
    assert.equal(await page.evaluate(() => localStorage.length + sessionStorage.length), 0)
    assert.equal(await page.evaluate(() => document.cookie), '', 'only the HttpOnly cookie')
    await page.getByRole('button', { name: 'Sign out' }).click()
    await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor()
    await page.goto('/account')
    await page.waitForURL('**/sign-in')
    await page.getByLabel('API key', { exact: true }).fill('wv_not-a-key')
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.getByText('That API key is not valid (or was replaced).').waitFor()
    await page.getByLabel('API key', { exact: true }).fill(key)
    await page.getByRole('button', { name: 'Sign in' }).click()
    // Back to the deep link that asked for the session.
    await page.getByRole('heading', { level: 1, name: 'Account' }).waitFor()
    assert.equal(new URL(page.url()).pathname, '/account')
  })

  it('account: plan and usage meters; upgrade through Stripe Checkout (the simulator\'s page); the key replaced and shown once', async () => {
    const key = await signup(rig.sys)
    await capture(`${rig.root}/hook/${(await (await fetch(api(rig.sys, '/endpoints'), { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: '{"name":"usage"}' })).json()).endpoint_id}`, { body: 'x' })
    const { page } = await open(key)
    await visit(page, '/account', 'Account')
    assert.equal(await page.locator('#plan-name').textContent(), 'Free')
    assert.equal(await page.locator('#meter-requests').getAttribute('value'), '1')
    assert.equal(await page.locator('#meter-requests').getAttribute('max'), '100')
    assert.equal(await page.locator('#meter-endpoints').getAttribute('value'), '1')
    await shot(page, 'webhooks-account')
    // Forwarding is a paid feature: the free plan's refusal shows at the field, nothing is created.
    await visit(page, '/endpoints', 'Endpoints')
    await page.getByText('Forwarding needs a paid plan (see Account).').waitFor()
    await page.getByLabel('Forward to (URL)').fill('https://example.com/in')
    await page.getByRole('button', { name: 'Create endpoint' }).click()
    await page.locator('#ep-forward-error').getByText(/not available on the free plan/).waitFor()
    assert.equal((await apiGet(key, '/endpoints')).endpoints.length, 1)
    await visit(page, '/account', 'Account')
    await page.getByLabel('Plan', { exact: true }).selectOption('pro')
    await page.getByRole('button', { name: 'Upgrade with Stripe Checkout' }).click()
    await page.waitForURL((u) => u.origin !== rig.root)
    await page.locator('#pay').click()
    await page.waitForURL('**/api/v1/billing/success**')
    await waitFor(async () => (await apiGet(key, '/account')).plan === 'pro', 20_000, 'the plan change')
    // The page Stripe returns to leads back to the account screen.
    await page.getByRole('link', { name: 'Back to your account' }).click()
    await page.getByRole('heading', { level: 1, name: 'Account' }).waitFor()
    assert.equal(await page.locator('#plan-name').textContent(), 'Pro')
    assert.match((await page.locator('.who').textContent())!, /pro/)

    await page.getByRole('button', { name: 'Replace API key…' }).click()
    const dialog = page.getByRole('dialog')
    assert.match((await dialog.textContent())!, /stops working at once/)
    await dialog.getByRole('button', { name: 'Replace the key now' }).click()
    const fresh = (await page.locator('.keyshow code.secret').textContent())!
    assert.match(fresh, /^wv_/)
    assert.notEqual(fresh, key)
    assert.equal((await get(api(rig.sys, '/account'), { key })).status, 401, 'the old key is refused')
    assert.equal((await get(api(rig.sys, '/account'), { key: fresh })).status, 200)
    // The console carries on with a session of the new key.
    await page.getByRole('button', { name: 'I have saved it' }).click()
    await page.getByRole('link', { name: 'Endpoints' }).click()
    await page.getByRole('heading', { level: 1, name: 'Endpoints' }).waitFor()
    await page.getByText('usage', { exact: true }).waitFor()
    // The key replaced elsewhere ends this session: the next call lands on the sign-in, saying why.
    const again = await fetch(api(rig.sys, '/account/key/rotate'), { method: 'POST', headers: { authorization: `Bearer ${fresh}` } })
    assert.equal(again.status, 200)
    await page.getByRole('button', { name: 'Refresh' }).click()
    await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor()
    await page.locator('.notice-warn').waitFor()
    assert.equal(await page.locator('.notice-warn').textContent(), SESSION_REVOKED)
  })

  it('endpoints: create with a forward target, the overview (captures today, last capture, health), copy, pause, resume, delete naming what is lost', async () => {
    const key = await signup(rig.sys, 'pro')
    const { page, context } = await open(key)
    await context.grantPermissions(['clipboard-read', 'clipboard-write'])
    await visit(page, '/endpoints', 'Endpoints')
    await page.getByText(/No endpoint yet/).waitFor()
    // The API's own refusal shows at the field.
    await page.getByLabel('Name').fill('orders')
    await page.getByLabel('Forward to (URL)').fill('ftp://example.com/x')
    await page.getByRole('button', { name: 'Create endpoint' }).click()
    await page.locator('#ep-forward-error').waitFor()
    assert.match((await page.locator('#ep-forward-error').textContent())!, /forward_url/)
    assert.equal((await apiGet(key, '/endpoints')).endpoints.length, 0, 'nothing created')
    failing = false
    await page.getByLabel('Forward to (URL)').fill(`${target.url}/in`)
    await page.getByRole('button', { name: 'Create endpoint' }).click()
    await page.getByRole('rowheader', { name: 'orders' }).waitFor()
    const ep = (await apiGet(key, '/endpoints')).endpoints[0]
    assert.equal(ep.forward_url, `${target.url}/in`)
    for (const b of ['a', 'b']) assert.equal((await capture(ep.url, { body: b })).status, 200)
    await waitFor(async () => (await apiGet(key, `/endpoints/${ep.endpoint_id}`)).forward_health.succeeded === 2, 20_000, 'two forwards')
    await page.getByRole('button', { name: 'Refresh' }).click()
    const row = page.getByRole('row', { name: /orders/ })
    await row.getByText('100 % of the last 2 attempts succeeded').waitFor()
    assert.equal(await row.locator('td.num').textContent(), '2')
    assert.match((await row.locator('time').first().textContent())!, /just now/)
    assert.equal(await row.locator('code.capture-url').textContent(), ep.url)
    await row.getByRole('button', { name: 'Copy capture URL of orders' }).click()
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), ep.url)
    await shot(page, 'webhooks-endpoints')

    await row.getByRole('button', { name: 'Pause forwarding of orders' }).click()
    await row.getByText('paused', { exact: true }).waitFor()
    assert.equal((await apiGet(key, `/endpoints/${ep.endpoint_id}`)).forward_paused, true)
    await row.getByRole('button', { name: 'Resume forwarding of orders' }).click()
    await row.getByText('forwarding', { exact: true }).waitFor()
    assert.equal((await apiGet(key, `/endpoints/${ep.endpoint_id}`)).forward_paused, false)

    await row.getByRole('button', { name: 'Delete orders' }).click()
    const dialog = page.getByRole('dialog')
    assert.match((await dialog.textContent())!, /capture URL stops answering.*2 captured requests go with it: bodies, headers and forward attempts.*cannot be undone/s)
    await dialog.getByRole('button', { name: 'Cancel' }).click()
    assert.equal((await apiGet(key, '/endpoints')).endpoints.length, 1, 'cancel deletes nothing')
    await row.getByRole('button', { name: 'Delete orders' }).click()
    await dialog.getByRole('button', { name: 'Delete endpoint for good' }).click()
    await page.getByText(/No endpoint yet/).waitFor()
    assert.equal((await apiGet(key, '/endpoints')).endpoints.length, 0)
    assert.equal((await capture(ep.url, { body: 'gone' })).status, 404)
  })

  it('deliveries: a dead-lettered forward shown with its attempts, retried from the console, arrives at the target; dead letters recovered since a time', async () => {
    const key = await signup(rig.sys, 'pro')
    failing = true
    const created = await fetch(api(rig.sys, '/endpoints'), { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'billing', forward_url: `${target.url}/billing` }) })
    const ep = await created.json()
    const body = `{"id":"evt_dead_${Date.now()}"}`
    const arrived = () => target.received.filter((r) => r.body.toString() === body)
    assert.equal((await capture(`${ep.url}/stripe`, { body, headers: { 'content-type': 'application/json' } })).status, 200)
    await waitFor(async () => (await apiGet(key, `/endpoints/${ep.endpoint_id}`)).forward_health.dead_lettered === 1, 20_000, 'the dead letter')
    assert.equal(arrived().length, 2, 'two failed attempts')

    const { page } = await open(key)
    await visit(page, '/endpoints', 'Endpoints')
    await page.getByRole('row', { name: /billing/ }).getByText('1 dead-lettered').waitFor()
    await page.getByRole('link', { name: 'billing' }).click()
    await page.getByRole('heading', { level: 1, name: 'billing' }).waitFor()
    assert.match((await page.locator('dl.forwarding').textContent())!, /target answered 503/)
    // The schedule as the service runs it (this test system's WEBHOOK_FORWARD_SCHEDULE_MS).
    assert.deepEqual((await apiGet(key, `/endpoints/${ep.endpoint_id}`)).forward_schedule_ms, [0, 100])
    assert.match((await page.locator('#schedule').textContent())!, /^2 attempts: the first at once, then after each failure 100 ms; after the last failure the request is dead-lettered/)
    await page.getByLabel('Show').selectOption('dead')
    const row = page.locator('tr[data-request="1"]')
    await row.getByText('dead-lettered').waitFor()
    const attempts = await row.locator('ol.attempts li').allTextContents()
    assert.equal(attempts.length, 2)
    for (const a of attempts) assert.match(a, /^attempt \d: 503 in \d+ ms — target answered 503/)
    await page.locator('#deliveries-title').evaluate((e) => e.scrollIntoView({ block: 'start' }))
    await shot(page, 'webhooks-deliveries')

    failing = false
    await row.getByRole('button', { name: 'Retry request #1' }).click()
    await waitFor(() => arrived().length === 3, 20_000, 'the retried delivery')
    assert.equal(arrived()[2]!.url, '/billing/stripe')
    await page.getByLabel('Show').selectOption('delivered')
    await page.locator('tr[data-request="1"]').getByText('delivered', { exact: true }).waitFor()
    assert.match((await page.locator('tr[data-request="1"] ol.attempts').textContent())!, /retry 1, attempt 1: 200/)

    // Two more dead letters, then recovered at once.
    failing = true
    for (const b of ['r1', 'r2']) assert.equal((await capture(ep.url, { body: b })).status, 200)
    await waitFor(async () => (await apiGet(key, `/endpoints/${ep.endpoint_id}`)).forward_health.dead_lettered === 2, 20_000, 'two dead letters')
    failing = false
    await page.getByLabel('Show').selectOption('failed')
    await page.locator('tr[data-request="3"]').waitFor()
    await page.getByRole('button', { name: 'Recover dead letters' }).click()
    await page.getByText(/Recovery done: 2 of 2 sent again/).waitFor({ timeout: 20_000 })
    await waitFor(() => ['r1', 'r2'].every((b) => target.received.some((r) => r.body.toString() === b && r.headers['queueworks-delivery-id'])), 20_000, 'the recovered deliveries')
    assert.equal((await apiGet(key, `/endpoints/${ep.endpoint_id}/deliveries?status=dead`)).deliveries.length, 0)
  })

  it('an endpoint\'s page follows its live stream: a capture and its forward show without a reload', async () => {
    const key = await signup(rig.sys, 'pro')
    failing = false
    const r = await fetch(api(rig.sys, '/endpoints'), { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'live one', forward_url: `${target.url}/live` }) })
    const ep = await r.json()
    const { page } = await open(key)
    await visit(page, `/endpoints/${ep.endpoint_id}`, 'live one')
    await page.getByText(/^Live: this page follows/).waitFor()
    await page.getByText('No forward matches.').waitFor()
    assert.equal((await capture(`${ep.url}/pushed`, { body: 'live' })).status, 200)
    const row = page.locator('tr[data-request="1"]')
    await row.getByText('delivered', { exact: true }).waitFor({ timeout: 20_000 })
    assert.match((await row.locator('ol.attempts').textContent())!, /attempt 1: 200/)
    await page.locator('dl.facts dd', { hasText: /^1$/ }).first().waitFor()
  })

  it('the inspection page opens from the console on its session (no key in the URL) and shows the captures live', async () => {
    const key = await signup(rig.sys)
    const r = await fetch(api(rig.sys, '/endpoints'), { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: '{"name":"inspect me"}' })
    const ep = await r.json()
    await capture(`${ep.url}/first`, { body: 'one' })
    const { page, context } = await open(key)
    await visit(page, `/endpoints/${ep.endpoint_id}`, 'inspect me')
    await shot(page, 'webhooks-endpoint')
    // A free plan's endpoint expires a week after it was made: a time to come, not "just now".
    await page.getByText('in 7 days', { exact: true }).waitFor()
    await page.getByText('None: this endpoint does not forward.', { exact: false }).waitFor()
    const link = page.getByRole('link', { name: /Open inspection page/ })
    assert.equal(await link.getAttribute('href'), `/inspect/${ep.endpoint_id}`)
    const [tab] = await Promise.all([context.waitForEvent('page'), link.click()])
    await tab!.locator('#requests li').first().waitFor()
    assert.deepEqual(await tab!.locator('#requests li .path').allTextContents(), ['/first'])
    assert.equal(await tab!.locator('#key-form').isHidden(), true, 'no key asked for')
    // Live: a new capture appears without a reload.
    await capture(`${ep.url}/second`, { body: 'two' })
    await tab!.locator('#requests li .path', { hasText: '/second' }).waitFor()
    // An action that changes something (delete) goes through with the session's CSRF token.
    await tab!.locator('#requests li', { hasText: '/first' }).locator('button.row').click()
    await tab!.getByRole('button', { name: 'Delete', exact: true }).click()
    await tab!.getByRole('button', { name: /Press again to delete/ }).click()
    await waitFor(async () => (await apiGet(key, `/endpoints/${ep.endpoint_id}/requests`)).requests.length === 1, 10_000, 'the deletion')
    assert.deepEqual(await tab!.evaluate(() => (window as any).__csp), [])
    // Another account's console session does not open it: the owner's key is asked for, and works.
    const other = await open(await signup(rig.sys))
    await other.page.goto(`/inspect/${ep.endpoint_id}`)
    await other.page.locator('#key-form').waitFor()
    assert.match((await other.page.locator('#status').textContent())!, /not in the account signed in to the console/)
    await other.page.fill('#key-input', key)
    await other.page.click('#key-form button')
    await other.page.locator('#requests li .path', { hasText: '/second' }).waitFor()
    // Signed out, the page asks for a key again.
    await page.getByRole('button', { name: 'Sign out' }).click()
    await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor()
    await tab!.reload()
    await tab!.locator('#key-form').waitFor()
  })
})
