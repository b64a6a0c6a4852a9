// The webhooks console's "Edit settings" of an endpoint, in Chromium against a real service with
// workers: a new target set from the page receives the next capture (and the old one nothing), the
// new response is shown and answered; a refusal (the browser's check or the API's message) is shown
// at its field; removing the target leaves the dead letters visible with their reason; the dialog
// works with the keyboard only, and is free of serious axe-core violations at 1280×800 and 390×844.
import assert from 'node:assert/strict'
import { axeViolations } from './helpers/a11y.ts'
import { cspViolations, DESKTOP, PHONE, shot, visit, focusedElement, tabUntil } from './helpers/console.ts'
import { get } from './helpers/http.ts'
import { api, capture, createEndpoint, signup, startTarget, waitFor, type Target } from './helpers/webhooks.ts'
import { openWebhooksConsole, startWebhooksConsole, type WebhooksPage, type WebhooksRig } from './helpers/webhooks-console.ts'

describe('webhooks console: editing an endpoint\'s settings (Chromium)', function () {
  this.timeout(90_000)
  let rig: WebhooksRig
  const targets: Target[] = []
  const pages: WebhooksPage[] = []
  before(async () => {
    rig = await startWebhooksConsole({ env: { WEBHOOK_FORWARD_SCHEDULE_MS: '0,60000', WEBHOOK_FORWARD_TIMEOUT_MS: '3000' } })
  })
  after(async () => {
    for (const p of pages) {
      assert.deepEqual(await cspViolations(p.page), [], 'CSP violations')
      assert.deepEqual(p.errors.filter((e) => e.startsWith('uncaught')), [], 'uncaught exceptions')
    }
    await Promise.all(targets.map((t) => t.close()))
    await rig?.stop()
  })
  const open = async (k: string, viewport = DESKTOP) => {
    const p = await openWebhooksConsole(rig, k, viewport)
    pages.push(p)
    return p
  }
  const target = async (status = 200) => {
    const t = await startTarget((_r, _i, res) => ((res.statusCode = status), res.end()))
    targets.push(t)
    return t
  }
  const read = async (key: string, token: string) => (await get(api(rig.sys, `/endpoints/${token}`), { key })).json

  it('a new target set from the page receives the next capture; the page shows the new values', async () => {
    const key = await signup(rig.sys, 'starter')
    const [a, b] = [await target(), await target()]
    const ep = await createEndpoint(rig.sys, key, { name: 'orders', forward_url: `${a.url}/old` })
    const { page } = await open(key)
    await visit(page, `/endpoints/${ep.endpoint_id}`, 'orders')
    await page.getByRole('button', { name: 'Edit settings' }).click()
    const dialog = page.getByRole('dialog', { name: 'Settings of orders' })
    await dialog.waitFor()
    assert.equal(await dialog.getByLabel('Forward to (URL)').inputValue(), `${a.url}/old`)
    await dialog.getByLabel('Forward to (URL)').fill(`${b.url}/new`)
    await dialog.getByLabel('Response status').fill('202')
    await dialog.getByLabel('Response body').fill('accepted')
    await dialog.getByRole('button', { name: 'Save settings' }).click()
    await dialog.waitFor({ state: 'hidden' })
    await page.getByText('Settings of orders saved').waitFor()
    await page.locator('.forwarding code.target', { hasText: `${b.url}/new` }).waitFor()
    await page.getByText('202 (application/json)').waitFor()
    const now = await read(key, ep.endpoint_id)
    assert.deepEqual([now.forward_url, now.response_code, now.response_body, now.url], [`${b.url}/new`, 202, 'accepted', ep.url])
    const c = await capture(ep.url, { body: 'after the change' })
    assert.equal(c.status, 202)
    assert.equal(c.text, 'accepted')
    await waitFor(() => b.received.length === 1, 20_000, 'the capture at the new target')
    assert.equal(b.received[0]!.body.toString(), 'after the change')
    assert.equal(a.received.length, 0)
    // The delivery lists the URL its attempt went to.
    await page.locator('.attempt-url', { hasText: `to ${b.url}/new` }).waitFor()
  })

  it('a refusal is shown at its field: the API\'s message, and the console\'s own check; nothing changes', async () => {
    const key = await signup(rig.sys) // free: forwarding is refused by the API
    const ep = await createEndpoint(rig.sys, key, { name: 'free one' })
    const { page } = await open(key)
    await visit(page, `/endpoints/${ep.endpoint_id}`, 'free one')
    await page.getByRole('button', { name: 'Edit settings' }).click()
    const dialog = page.getByRole('dialog')
    await dialog.getByLabel('Forward to (URL)').fill('https://example.com/hooks')
    await dialog.getByRole('button', { name: 'Save settings' }).click()
    const forward = dialog.getByLabel('Forward to (URL)')
    await dialog.locator('#set-forward-error', { hasText: 'Forwarding (forward_url) is not available on the free plan' }).waitFor()
    assert.equal(await forward.getAttribute('aria-invalid'), 'true')
    assert.match((await forward.getAttribute('aria-describedby')) ?? '', /set-forward-error/)
    await forward.fill('')
    await dialog.getByLabel('Response content type').fill('text/plain; name=é')
    await dialog.getByRole('button', { name: 'Save settings' }).click()
    await dialog.locator('#set-type-error', { hasText: 'response_content_type must be printable ASCII' }).waitFor()
    assert.equal(await dialog.getByLabel('Response content type').getAttribute('aria-invalid'), 'true')
    const now = await read(key, ep.endpoint_id)
    assert.deepEqual([now.forward_url, now.response_content_type], [null, 'application/json'])
    for (const viewport of [DESKTOP, PHONE]) {
      await page.setViewportSize(viewport)
      assert.deepEqual(await axeViolations(page), [], `the form with a refusal at ${viewport.width}×${viewport.height}`)
    }
  })

  it('removing the target stops forwarding: the owed forward is dead-lettered and still listed with the reason', async () => {
    const key = await signup(rig.sys, 'pro')
    const down = await target(503)
    const ep = await createEndpoint(rig.sys, key, { name: 'winding down', forward_url: down.url })
    await capture(ep.url, { body: 'owed' })
    await waitFor(async () => (await get(api(rig.sys, `/endpoints/${ep.endpoint_id}/requests/1`), { key })).json.forward?.status === 'retrying', 20_000, 'retrying')
    const { page } = await open(key)
    await visit(page, `/endpoints/${ep.endpoint_id}`, 'winding down')
    await page.getByRole('button', { name: 'Edit settings' }).click()
    await page.getByRole('dialog').getByLabel('Forward to (URL)').fill('')
    await page.getByRole('dialog').getByRole('button', { name: 'Save settings' }).click()
    await page.getByText('forwards still owed were dead-lettered', { exact: false }).waitFor()
    await page.getByText('Not forwarded: this endpoint only captures.', { exact: false }).waitFor()
    await page.locator('tr[data-request="1"] .dead-reason', { hasText: 'forwarding was turned off for this endpoint' }).waitFor()
    assert.equal((await read(key, ep.endpoint_id)).forward_url, null)
  })

  it('keyboard only: open the dialog, change the name, save; Escape cancels and gives the focus back', async () => {
    const key = await signup(rig.sys, 'starter')
    const ep = await createEndpoint(rig.sys, key, { name: 'by keys' })
    const { page } = await open(key)
    await visit(page, `/endpoints/${ep.endpoint_id}`, 'by keys')
    const focused = () => focusedElement(page)
    const tabTo = (want: RegExp) => tabUntil(page, want, 40)
    await tabTo(/^button:Edit settings$/)
    await page.keyboard.press('Enter')
    await page.getByRole('dialog').waitFor()
    await page.keyboard.press('Escape')
    await page.getByRole('dialog').waitFor({ state: 'hidden' })
    assert.match(await focused(), /^button:Edit settings$/, 'focus returns to the button that opened the dialog')
    await page.keyboard.press('Enter')
    await page.getByRole('dialog').waitFor()
    assert.match(await focused(), /^input#set-name/, 'the dialog takes the focus on its first field')
    await page.keyboard.press('ControlOrMeta+A')
    await page.keyboard.type('renamed by keys')
    await page.keyboard.press('Enter')
    await page.getByRole('heading', { level: 1, name: 'renamed by keys' }).waitFor()
    assert.equal((await read(key, ep.endpoint_id)).name, 'renamed by keys')
  })

  for (const [name, viewport] of [['1280×800', DESKTOP], ['390×844', PHONE]] as const) {
    it(`${name}: the open settings form has no serious or critical axe-core violation`, async () => {
      const key = await signup(rig.sys, 'starter')
      const t = await target()
      const ep = await createEndpoint(rig.sys, key, { name: 'checked', forward_url: `${t.url}/in` })
      const { page } = await open(key, viewport)
      await visit(page, `/endpoints/${ep.endpoint_id}`, 'checked')
      await page.getByRole('button', { name: 'Edit settings' }).click()
      await page.getByRole('dialog').getByLabel('Response body').waitFor()
      assert.deepEqual(await axeViolations(page), [], 'the open settings form')
      if (viewport === DESKTOP) await shot(page, 'webhooks-endpoint-settings')
      else assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= innerWidth), 'the page scrolls sideways')
    })
  }
})
