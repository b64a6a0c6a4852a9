// The flags console with several people at once and when things go wrong, in Chromium: the list
// and the open flag page follow changes made elsewhere (the API, another browser) through the
// change stream; two browsers editing one flag — the stale one gets the 412 as a conflict it can
// reload or re-apply; a flag deleted elsewhere says so; a 4xx shows the API's own message; the
// service unreachable → a banner, gone by itself when it is back; a revoked key ends the session.
import assert from 'node:assert/strict'
import { startTcpProxy } from './helpers/tcp-proxy.ts'
import { apiCall, consoleAccount, cspViolations, openConsole, shot, startConsole, visit, type ConsoleRig } from './helpers/console.ts'
import type { FlagsAccount } from './helpers/flags.ts'

// Generous: a change elsewhere reaches the page within about a second; the wait is not the assertion.
const LIVE = { timeout: 15_000 }

describe('flags console: live updates, conflicts and failures (Chromium)', function () {
  this.timeout(60_000)
  let rig: ConsoleRig
  let acc: FlagsAccount
  before(async () => {
    rig = await startConsole()
    acc = await consoleAccount(rig)
  })
  after(async () => {
    await rig?.stop()
  })

  it('the flags list shows a flag created, changed and deleted through the API without a reload', async () => {
    const { page, context } = await openConsole(rig, acc)
    await visit(page, `/projects/${acc.projectId}`, 'Flags')
    await page.getByText('No flags yet').waitFor()
    assert.equal((await apiCall(acc, 'POST', '/flags', { key: 'from-api', type: 'boolean', default_value: false })).status, 201)
    const row = page.getByRole('row', { name: /from-api/ })
    await row.waitFor(LIVE)
    assert.equal(await row.locator('.pill').first().textContent(), 'Off')
    await apiCall(acc, 'PUT', '/flags/from-api', { enabled: true })
    await row.locator('.pill.on').waitFor(LIVE)
    await apiCall(acc, 'DELETE', '/flags/from-api')
    await row.waitFor({ state: 'detached', ...LIVE })
    assert.deepEqual(await cspViolations(page), [])
    await context.close()
  })

  it('a flag created before the change stream was open still shows: the list reads again once the stream is ready', async () => {
    const own = await consoleAccount(rig)
    const { page, context } = await openConsole(rig, own)
    // The stream's request is held until the flag exists: the change reaches no stream.
    let release!: () => void
    const held = new Promise<void>((r) => (release = r))
    await page.route('**/events', async (route) => {
      await held
      await route.continue()
    })
    await visit(page, `/projects/${own.projectId}`, 'Flags')
    await page.getByText('No flags yet').waitFor()
    assert.equal((await apiCall(own, 'POST', '/flags', { key: 'before-ready', type: 'boolean', default_value: false })).status, 201)
    release()
    await page.getByRole('row', { name: /before-ready/ }).waitFor(LIVE)
    await context.close()
  })

  it('two browsers edit one flag: the open page follows the other’s change; a stale edit gets the conflict, then reload or re-apply', async () => {
    await apiCall(acc, 'POST', '/flags', { key: 'shared', type: 'string', default_value: 'blue' })
    const a = await openConsole(rig, acc)
    const b = await openConsole(rig, acc)
    for (const p of [a.page, b.page]) await visit(p, `/projects/${acc.projectId}/flags/shared`, 'shared')
    // A turns it on: B, with nothing unsaved, follows.
    await a.page.getByLabel('On in production').check()
    await b.page.getByLabel('On in production').and(b.page.locator(':checked')).waitFor(LIVE)
    // B starts editing, then A saves another default: B is told, and its save is refused (412).
    await b.page.getByLabel('Default value in production').fill('green')
    await a.page.getByLabel('Default value in production').fill('red')
    await a.page.getByRole('button', { name: 'Save production' }).click()
    await a.page.getByText('Saved shared in production').waitFor()
    await b.page.getByText('This flag was just changed elsewhere').waitFor(LIVE)
    await b.page.getByRole('button', { name: 'Save production' }).click()
    const conflict = b.page.locator('.conflict')
    await conflict.waitFor()
    assert.match((await conflict.textContent())!, /The flag was changed by someone else \(version \d+ is current\).*was not applied/)
    await shot(b.page, 'conflict')
    assert.equal((await apiCall(acc, 'GET', '/flags/shared')).json.default_value, 'red', 'the stale edit was applied')
    // Re-apply: B's change on top of A's version.
    await conflict.getByRole('button', { name: 'Re-apply my change' }).click()
    await b.page.getByText('Saved shared in production').waitFor()
    assert.equal(await conflict.count(), 0)
    assert.equal((await apiCall(acc, 'GET', '/flags/shared')).json.default_value, 'green')
    // Again, and this time B reloads: A's value is shown and kept.
    await a.page.getByLabel('Default value in production').waitFor()
    await b.page.getByLabel('Default value in production').fill('purple')
    assert.equal((await apiCall(acc, 'PUT', '/flags/shared', { default_value: 'yellow' })).status, 200)
    await b.page.getByText('This flag was just changed elsewhere').waitFor(LIVE)
    await b.page.getByRole('button', { name: 'Save production' }).click()
    await conflict.getByRole('button', { name: 'Reload (drop my change)' }).click()
    await conflict.waitFor({ state: 'detached' })
    assert.equal(await b.page.getByLabel('Default value in production').inputValue(), 'yellow')
    assert.equal((await apiCall(acc, 'GET', '/flags/shared')).json.default_value, 'yellow')
    await a.context.close()
    await b.context.close()
  })

  it('a flag deleted in another tab says it was deleted', async () => {
    await apiCall(acc, 'POST', '/flags', { key: 'doomed' })
    const { page, context } = await openConsole(rig, acc)
    await visit(page, `/projects/${acc.projectId}/flags/doomed`, 'doomed')
    const other = await context.newPage()
    await visit(other, `/projects/${acc.projectId}/flags/doomed`, 'doomed')
    await other.getByRole('button', { name: 'Delete flag' }).click()
    await other.getByRole('dialog').getByRole('button', { name: 'Delete flag' }).click()
    await other.getByRole('heading', { level: 1, name: 'Flags' }).waitFor()
    await page.getByRole('heading', { name: 'This flag was deleted' }).waitFor(LIVE)
    // Opened afterwards, the same.
    await page.goto(`/projects/${acc.projectId}/flags/doomed`)
    await page.getByRole('heading', { name: 'This flag was deleted' }).waitFor()
    await context.close()
  })

  it('a 4xx shows the API’s own message', async () => {
    await apiCall(acc, 'POST', '/flags', { key: 'taken' })
    const { page, context } = await openConsole(rig, acc)
    await visit(page, `/projects/${acc.projectId}`, 'Flags')
    await page.getByRole('button', { name: 'New flag' }).click()
    const dialog = page.getByRole('dialog', { name: 'New flag' })
    await dialog.getByLabel('Key').fill('taken')
    await dialog.getByRole('button', { name: 'Create flag' }).click()
    const api = await apiCall(acc, 'POST', '/flags', { key: 'taken' })
    assert.equal(api.status, 409)
    await dialog.getByText(api.json.error).waitFor()
    await context.close()
  })

  it('the service unreachable: a banner says so, and it goes by itself when the service is back', async () => {
    const proxy = await startTcpProxy(rig.root)
    try {
      const { page, context } = await openConsole(rig, acc, undefined, proxy.url)
      await visit(page, `/projects/${acc.projectId}`, 'Flags')
      const banner = page.locator('.banner')
      await proxy.drop()
      await banner.waitFor(LIVE)
      assert.match((await banner.textContent())!, /cannot be reached \(down or restarting\).*retries by itself/)
      await shot(page, 'service-down')
      // A change tried meanwhile is refused in this console's words (the shared client names its service).
      await page.getByRole('button', { name: 'New flag' }).click()
      const dialog = page.getByRole('dialog', { name: 'New flag' })
      await dialog.getByLabel('Key').fill('tried-while-away')
      await dialog.getByRole('button', { name: 'Create flag' }).click()
      await dialog.getByText(/^The flags service (cannot be reached|is restarting or unavailable)\. Retrying…$/).waitFor(LIVE)
      await page.keyboard.press('Escape')
      await dialog.waitFor({ state: 'hidden' })
      // Meanwhile a change is made; once back, the page shows it without a reload.
      await apiCall(acc, 'POST', '/flags', { key: 'while-away' })
      await proxy.restore()
      await banner.waitFor({ state: 'detached', ...LIVE })
      await page.getByRole('row', { name: /while-away/ }).waitFor(LIVE)
      await context.close()
    } finally {
      await proxy.close()
    }
  })

  it('a revoked API key ends the session with a clear message', async () => {
    const own = await consoleAccount(rig)
    const { page, context } = await openConsole(rig, own)
    await visit(page, `/projects/${own.projectId}`, 'Flags')
    const seen: string[] = []
    page.on('response', async (res) => { if (res.status() === 401) seen.push(`${res.url().replace(rig.root, '')} ${await res.text().catch(() => '?')}`) })
    const r = await fetch(`${rig.root}/api/v1/account/key/rotate`, { method: 'POST', headers: { authorization: `Bearer ${own.apiKey}` } })
    assert.equal(r.status, 200)
    // Without a click: the change stream is ended by the service, and the console asks why.
    await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor(LIVE)
    const notice = page.locator('.notice-warn')
    await notice.waitFor()
    assert.equal(await notice.textContent(), 'Your session ended: the API key was revoked', seen.join('\n'))
    await context.close()
  })
})
