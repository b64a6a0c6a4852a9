// An endpoint's settings changed or the endpoint deleted in one browser reach every other open page
// through the endpoint's live stream, without a reload (Chromium, two browser contexts on one
// endpoint page, a real service): the header, the forwarding section and the Edit settings
// dialog's defaults follow; an open dialog with unsaved edits keeps them and says the settings
// changed elsewhere (saving then sends only what was edited there); a deletion turns the other
// page into a "deleted" notice, free of serious axe-core violations at 1280×800 and 390×844, and
// the inspection page says so too.
import assert from 'node:assert/strict'
import type { Page } from 'playwright-core'
import { axeViolations } from './helpers/a11y.ts'
import { cspViolations, DESKTOP, PHONE, visit } from './helpers/console.ts'
import { call, get } from './helpers/http.ts'
import { api, capture, createEndpoint, signup, startTarget, type Target } from './helpers/webhooks.ts'
import { openWebhooksConsole, startWebhooksConsole, type WebhooksPage, type WebhooksRig } from './helpers/webhooks-console.ts'

describe('webhooks console: settings and deletion reach other open pages live (Chromium)', function () {
  this.timeout(90_000)
  let rig: WebhooksRig
  const targets: Target[] = []
  const pages: WebhooksPage[] = []
  before(async () => {
    rig = await startWebhooksConsole({ workers: false })
  })
  after(async () => {
    for (const p of pages) {
      assert.deepEqual(await cspViolations(p.page), [], 'CSP violations')
      assert.deepEqual(p.errors.filter((e) => e.startsWith('uncaught')), [], 'uncaught exceptions')
    }
    await Promise.all(targets.map((t) => t.close()))
    await rig?.stop()
  })
  const target = async () => {
    const t = await startTarget()
    targets.push(t)
    return t
  }
  /** Two browser contexts (two people, or two windows) on the endpoint's page, both following its stream. */
  const twoPages = async (key: string, token: string, heading: string): Promise<[Page, Page]> => {
    const out: Page[] = []
    for (let i = 0; i < 2; i++) {
      const p = await openWebhooksConsole(rig, key, DESKTOP)
      pages.push(p)
      await visit(p.page, `/endpoints/${token}`, heading)
      await p.page.getByText(/^Live: this page follows/).waitFor()
      // Gone if the page reloads: what follows must arrive without one.
      await p.page.evaluate(() => ((window as any).__sameDocument = true))
      out.push(p.page)
    }
    return out as [Page, Page]
  }
  const sameDocument = (p: Page) => p.evaluate(() => (window as any).__sameDocument === true)
  const read = async (key: string, token: string) => (await get(api(rig.sys, `/endpoints/${token}`), { key })).json

  it('settings saved in one page show in the other at once: header, response, forwarding target and state, the dialog\'s defaults', async () => {
    const key = await signup(rig.sys, 'starter')
    const [a, b] = [await target(), await target()]
    const ep = await createEndpoint(rig.sys, key, { name: 'orders', forward_url: `${a.url}/old` })
    const [one, two] = await twoPages(key, ep.endpoint_id, 'orders')
    await two.locator('.forwarding code.target', { hasText: `${a.url}/old` }).waitFor()

    await one.getByRole('button', { name: 'Edit settings' }).click()
    const dialog = one.getByRole('dialog', { name: 'Settings of orders' })
    await dialog.getByLabel('Name').fill('orders v2')
    await dialog.getByLabel('Forward to (URL)').fill(`${b.url}/new`)
    await dialog.getByLabel('Response status').fill('202')
    await dialog.getByLabel('Response body').fill('queued')
    await dialog.getByRole('button', { name: 'Save settings' }).click()
    await one.getByText('Settings of orders v2 saved').waitFor()

    await two.getByRole('heading', { level: 1, name: 'orders v2' }).waitFor()
    await two.locator('.forwarding code.target', { hasText: `${b.url}/new` }).waitFor()
    await two.getByText('202 (application/json)').waitFor()
    await two.locator('code.response-body', { hasText: 'queued' }).waitFor()
    // Pausing in the first page: the second shows the state and the button that undoes it.
    await one.getByRole('button', { name: 'Pause forwarding' }).click()
    await two.locator('.forwarding .pill', { hasText: 'paused' }).waitFor()
    await two.getByRole('button', { name: 'Resume forwarding' }).waitFor()
    assert.equal(await sameDocument(two), true, 'no reload')
    // The dialog, opened now, starts from the new settings.
    await two.getByRole('button', { name: 'Edit settings' }).click()
    const theirs = two.getByRole('dialog', { name: 'Settings of orders v2' })
    assert.equal(await theirs.getByLabel('Forward to (URL)').inputValue(), `${b.url}/new`)
    assert.equal(await theirs.getByLabel('Response status').inputValue(), '202')
    assert.equal(await theirs.getByLabel('Response body').inputValue(), 'queued')
    await theirs.getByRole('button', { name: 'Cancel' }).click()
  })

  it('an open dialog follows when it holds no edits, and with unsaved edits says "changed elsewhere" and keeps them; saving sends only those', async () => {
    const key = await signup(rig.sys, 'starter')
    const ep = await createEndpoint(rig.sys, key, { name: 'shared', response_body: 'v1' })
    const [one, two] = await twoPages(key, ep.endpoint_id, 'shared')
    const mine = two.getByRole('dialog', { name: /^Settings of / })
    await two.getByRole('button', { name: 'Edit settings' }).click()
    await mine.waitFor()

    // No edits in the second page's dialog: its fields take the first page's change.
    const edit = async (fill: Record<string, string>) => {
      await one.getByRole('button', { name: 'Edit settings' }).click()
      const d = one.getByRole('dialog', { name: /^Settings of / })
      for (const [label, value] of Object.entries(fill)) await d.getByLabel(label).fill(value)
      await d.getByRole('button', { name: 'Save settings' }).click()
      await d.waitFor({ state: 'hidden' })
    }
    await edit({ 'Response body': 'v2' })
    await two.waitForFunction(() => (document.getElementById('set-body') as HTMLTextAreaElement | null)?.value === 'v2')
    assert.equal(await mine.getByText('changed elsewhere', { exact: false }).count(), 0)

    // An unsaved edit there, then another change in the first page: kept, and said.
    await mine.getByLabel('Name').fill('renamed in two')
    await edit({ 'Response status': '201', 'Response body': 'v3' })
    const notice = mine.locator('#settings-elsewhere')
    await notice.waitFor()
    assert.match((await notice.textContent())!, /These settings were changed elsewhere .* while you edited them/)
    assert.equal(await mine.getByLabel('Name').inputValue(), 'renamed in two')
    await two.getByText('201 (application/json)').waitFor() // the page behind the dialog follows
    await mine.getByRole('button', { name: 'Save settings' }).click()
    await mine.waitFor({ state: 'hidden' })
    const now = await read(key, ep.endpoint_id)
    assert.deepEqual([now.name, now.response_code, now.response_body], ['renamed in two', 201, 'v3'], 'the other change was not put back')
    await one.getByRole('heading', { level: 1, name: 'renamed in two' }).waitFor()
    assert.equal(await sameDocument(one), true, 'no reload')
    assert.equal(await sameDocument(two), true, 'no reload')

    // "show the new settings" drops the edits.
    await two.getByRole('button', { name: 'Edit settings' }).click()
    await mine.getByLabel('Response body').fill('mine, unsaved')
    await edit({ 'Response body': 'v4' })
    await mine.getByRole('button', { name: 'show the new settings' }).click()
    assert.equal(await mine.getByLabel('Response body').inputValue(), 'v4')
    assert.equal(await mine.locator('#settings-elsewhere').count(), 0)
  })

  it('deleting in one page makes the other say the endpoint was deleted (axe-clean at two sizes), and the inspection page too', async () => {
    const key = await signup(rig.sys, 'starter')
    const ep = await createEndpoint(rig.sys, key, { name: 'doomed' })
    await capture(ep.url, { body: 'captured before' })
    const [one, two] = await twoPages(key, ep.endpoint_id, 'doomed')
    // The inspection page, opened from the second page's console session.
    const inspect = await two.context().newPage()
    await inspect.goto(`/inspect/${ep.endpoint_id}`)
    await inspect.waitForFunction(() => document.getElementById('status')?.textContent?.endsWith('· live'))
    await inspect.locator('#requests li').first().waitFor()

    await one.getByRole('button', { name: 'Delete…' }).click()
    await one.getByRole('button', { name: 'Delete endpoint for good' }).click()
    await one.getByRole('heading', { level: 1, name: 'Endpoints' }).waitFor()

    const notice = two.getByRole('alert').filter({ hasText: 'This endpoint was deleted' })
    await notice.waitFor()
    assert.match((await notice.textContent())!, /doomed no longer exists: it was deleted \(in another tab, by someone else or through the API\)/)
    assert.equal(await two.getByRole('button', { name: 'Edit settings' }).count(), 0)
    assert.equal(await sameDocument(two), true, 'no reload')
    assert.equal(await one.getByText('This endpoint was deleted').count(), 0, 'the page that deleted it moved on without the notice')
    for (const viewport of [DESKTOP, PHONE]) {
      await two.setViewportSize(viewport)
      assert.deepEqual(await axeViolations(two), [], `the deleted state at ${viewport.width}×${viewport.height}`)
    }
    await two.getByRole('link', { name: 'Back to all endpoints' }).click()
    await two.getByRole('heading', { level: 1, name: 'Endpoints' }).waitFor()

    await inspect.getByRole('alert').filter({ hasText: 'This endpoint was deleted' }).waitFor()
    assert.equal(await inspect.locator('#status').textContent(), 'Endpoint deleted')
    assert.equal(await inspect.locator('#requests li').count(), 0)
    assert.equal(await inspect.locator('#capture-bar').isVisible(), false)
    assert.deepEqual(await cspViolations(inspect), [])
    for (const viewport of [DESKTOP, PHONE]) {
      await inspect.setViewportSize(viewport)
      assert.deepEqual(await axeViolations(inspect), [], `the inspection page's deleted state at ${viewport.width}×${viewport.height}`)
    }
  })

  it('a change made before the stream was open still shows: the page reads again once it is open', async () => {
    const key = await signup(rig.sys, 'starter')
    const ep = await createEndpoint(rig.sys, key, { name: 'early' })
    const p = await openWebhooksConsole(rig, key, DESKTOP)
    pages.push(p)
    // The stream's request is held until the change is made: it reaches no stream.
    let release!: () => void
    const held = new Promise<void>((r) => (release = r))
    await p.page.route('**/stream', async (route) => {
      await held
      await route.continue()
    })
    await visit(p.page, `/endpoints/${ep.endpoint_id}`, 'early')
    const r = await call('PATCH', api(rig.sys, `/endpoints/${ep.endpoint_id}`), { json: { name: 'renamed before the stream' }, key })
    assert.equal(r.status, 200, r.text)
    release()
    await p.page.getByRole('heading', { level: 1, name: 'renamed before the stream' }).waitFor()
  })

  it('the inspection page follows a settings change: its title and the Replay target', async () => {
    const key = await signup(rig.sys, 'starter')
    const t = await target()
    const ep = await createEndpoint(rig.sys, key, { name: 'inspected', forward_url: `${t.url}/first` })
    await capture(ep.url, { body: 'one' })
    const p = await openWebhooksConsole(rig, key, DESKTOP)
    pages.push(p)
    const inspect = p.page
    await inspect.goto(`/inspect/${ep.endpoint_id}`)
    await inspect.waitForFunction(() => document.getElementById('status')?.textContent?.endsWith('· live'))
    await inspect.getByRole('heading', { level: 1, name: 'inspected · webhook inspector' }).waitFor()
    const r = await fetch(api(rig.sys, `/endpoints/${ep.endpoint_id}`), {
      method: 'PATCH',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'inspected v2', forward_url: `${t.url}/second` }),
    })
    assert.equal(r.status, 200)
    await inspect.getByRole('heading', { level: 1, name: 'inspected v2 · webhook inspector' }).waitFor()
    assert.equal(await inspect.title(), 'inspected v2 · webhook inspector')
    await inspect.locator('#requests li button.row').first().click()
    const replay = inspect.locator('.actions input[type=url]').first()
    assert.equal(await replay.inputValue(), `${t.url}/second`)
  })
})
