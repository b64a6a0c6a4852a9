// The flags console's project edits that are guarded by the project's version, and a change
// webhook's new signing secret, end to end in Chromium: two browser contexts editing the allowed
// origins (the second gets the conflict with their list, and can re-apply or reload), a rename made
// on a stale copy (the conflict in the dialog, re-applied), rotating a webhook's secret (a
// confirmation, the new secret once with its copy button, never again after a reload), the
// keyboard alone, and axe-core on these states at 1280×800 and 390×844.
import assert from 'node:assert/strict'
import type { Locator, Page } from 'playwright-core'
import { axeViolations } from './helpers/a11y.ts'
import { apiCall, consoleAccount, cspViolations, DESKTOP, openConsole, PHONE, startConsole, visit, type ConsoleRig, pageErrors, focusOn } from './helpers/console.ts'
import type { FlagsAccount } from './helpers/flags.ts'

const HOOK = 'https://hooks.example.com/flags'

const originsOf = async (a: FlagsAccount) => (await apiCall(a, 'GET', '')).json.allowed_origins as string[]
const onlyWebhook = async (a: FlagsAccount) => (await apiCall(a, 'GET', '/webhooks')).json.webhooks[0]
/** Errors of the page but the browser's own line for each 4xx answer (the 412s these tests ask for). */
const originsEditor = (page: Page) => page.locator('section.card', { has: page.getByRole('heading', { name: 'Allowed origins (web pages)' }) })
const focused = focusOn

async function addOrigin(editor: Locator, origin: string): Promise<void> {
  await editor.getByLabel('Only the origins listed').check()
  const field = editor.getByLabel('Origin', { exact: true })
  await field.fill(origin)
  await field.press('Enter')
  await editor.locator('li code', { hasText: origin }).waitFor()
}

describe('flags console: project conflicts and webhook secret rotation (Chromium)', function () {
  this.timeout(90_000)
  let rig: ConsoleRig
  before(async () => {
    rig = await startConsole()
  })
  after(async () => {
    await rig?.stop()
  })

  async function account(): Promise<FlagsAccount> {
    const a = await consoleAccount(rig)
    assert.equal((await apiCall(a, 'POST', '/webhooks', { url: HOOK })).status, 201)
    return a
  }

  it('two people edit the allowed origins: the second save gets the conflict with their list, and re-applies or reloads', async () => {
    const a = await account()
    const first = await openConsole(rig, a)
    const second = await openConsole(rig, a)
    for (const cp of [first, second]) await visit(cp.page, `/projects/${a.projectId}/environments`, 'Environments and keys')
    const one = originsEditor(first.page)
    const two = originsEditor(second.page)

    // Both start from the same version; the first saves.
    await addOrigin(two, 'https://two.example')
    await addOrigin(one, 'https://one.example')
    await one.getByRole('button', { name: 'Save allowed origins' }).click()
    await first.page.getByText('Allowed origins saved').waitFor()
    assert.deepEqual(await originsOf(a), ['https://one.example'])

    // The second's save is refused, shown with their list, nothing overwritten.
    await two.getByRole('button', { name: 'Save allowed origins' }).click()
    const conflict = two.getByRole('alert').filter({ hasText: "Someone else changed this project's settings" })
    await conflict.waitFor()
    assert.match((await conflict.textContent())!, /The project was changed by someone else \(version 2 is current\).*Their allowed origins: https:\/\/one\.example.*Yours: https:\/\/two\.example.*not applied/s)
    assert.deepEqual(await originsOf(a), ['https://one.example'], 'not overwritten')

    // Re-apply: the second's list on the first's version.
    await conflict.getByRole('button', { name: 'Re-apply my change' }).click()
    await second.page.getByText('Allowed origins saved').waitFor()
    assert.deepEqual(await originsOf(a), ['https://two.example'])
    assert.equal(await two.getByRole('alert').filter({ hasText: 'Someone else changed' }).count(), 0)

    // Again, and this time the second drops its change: the editor shows the list as saved.
    await addOrigin(two, 'https://three.example')
    assert.equal((await apiCall(a, 'PATCH', '', { allowed_origins: ['https://elsewhere.example'] })).status, 200)
    await two.getByRole('button', { name: 'Save allowed origins' }).click()
    await conflict.waitFor()
    await conflict.getByRole('button', { name: 'Reload (drop my change)' }).click()
    await two.locator('li code', { hasText: 'https://elsewhere.example' }).waitFor()
    assert.equal(await two.locator('li code', { hasText: 'https://three.example' }).count(), 0)
    assert.equal(await two.getByText('Not saved yet').count(), 0)
    assert.deepEqual(await originsOf(a), ['https://elsewhere.example'])
    for (const cp of [first, second]) {
      assert.deepEqual(await cspViolations(cp.page), [])
      assert.deepEqual(pageErrors(cp), [])
      await cp.context.close()
    }
  })

  it('a rename made on a stale copy gets the conflict in the dialog with the name as it is now, and re-applies', async () => {
    const a = await account()
    const cp = await openConsole(rig, a)
    const { page } = cp
    await visit(page, '/', 'Projects')
    await page.getByRole('button', { name: 'Rename Default' }).click()
    const dialog = page.getByRole('dialog', { name: 'Rename Default' })
    await dialog.getByLabel('New name').fill('Mine')
    assert.equal((await apiCall(a, 'PATCH', '', { name: 'Theirs' })).status, 200)
    await dialog.getByRole('button', { name: 'Rename', exact: true }).click()
    const conflict = page.getByRole('dialog').getByRole('alert').filter({ hasText: 'Someone else changed this project' })
    await conflict.waitFor()
    assert.match((await conflict.textContent())!, /version 2 is current.*Its name now: Theirs.*not applied/s)
    assert.equal((await apiCall(a, 'GET', '')).json.name, 'Theirs')
    await conflict.getByRole('button', { name: 'Re-apply my change' }).click()
    await page.getByRole('dialog').waitFor({ state: 'hidden' })
    await page.getByRole('rowheader', { name: 'Mine' }).waitFor()
    assert.equal((await apiCall(a, 'GET', '')).json.name, 'Mine')
    assert.deepEqual(pageErrors(cp), [])
    await cp.context.close()
  })

  it('rotate a webhook secret: a confirmation, the new secret shown once with its copy button, never again; Cancel changes nothing', async () => {
    const a = await account()
    const before = await onlyWebhook(a)
    const cp = await openConsole(rig, a)
    const { page } = cp
    await visit(page, `/projects/${a.projectId}/webhooks`, 'Change webhooks')
    const card = page.getByRole('region', { name: `Webhook ${HOOK}` })
    await card.getByText(before.secret_hint).waitFor()

    await card.getByRole('button', { name: `Rotate secret of the webhook ${HOOK}` }).click()
    let dialog = page.getByRole('dialog', { name: "Rotate this webhook's signing secret?" })
    await dialog.getByText('stops signing at once').waitFor()
    await dialog.getByRole('button', { name: 'Cancel' }).click()
    await dialog.waitFor({ state: 'hidden' })
    assert.equal((await onlyWebhook(a)).secret_hint, before.secret_hint, 'Cancel rotates nothing')

    await card.getByRole('button', { name: `Rotate secret of the webhook ${HOOK}` }).click()
    await dialog.getByRole('button', { name: 'Rotate secret' }).click()
    dialog = page.getByRole('dialog', { name: 'New signing secret' })
    await dialog.getByText('shown only once').waitFor()
    const secret = (await dialog.locator('code.secret').textContent())!
    assert.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/)
    const after = await onlyWebhook(a)
    assert.notEqual(after.secret_hint, before.secret_hint)
    assert.equal(after.secret_hint, `${secret.slice(0, 10)}…`, 'the secret shown is the one the service signs with')
    await dialog.getByRole('button', { name: 'Copy signing secret' }).waitFor()
    await dialog.getByRole('button', { name: 'Done' }).click()
    await dialog.waitFor({ state: 'hidden' })
    await card.getByText(after.secret_hint).waitFor()

    await visit(page, `/projects/${a.projectId}/webhooks`, 'Change webhooks')
    await card.getByText(after.secret_hint).waitFor()
    assert.equal(await page.getByText(secret).count(), 0, 'shown once: not after a reload')
    assert.deepEqual(await cspViolations(page), [])
    assert.deepEqual(pageErrors(cp), [])
    await cp.context.close()
  })

  it('keyboard only: rotate (Enter confirms, the copy button takes focus, Escape closes back to the button); the origins conflict re-applied', async () => {
    const a = await account()
    const cp = await openConsole(rig, a)
    const { page } = cp
    await visit(page, `/projects/${a.projectId}/webhooks`, 'Change webhooks')
    const rotate = `button[aria-label="Rotate secret of the webhook ${HOOK}"]`
    await page.locator(rotate).focus()
    await page.keyboard.press('Enter')
    await page.getByRole('dialog', { name: "Rotate this webhook's signing secret?" }).waitFor()
    await focused(page, 'dialog button.danger')
    await page.keyboard.press('Enter')
    await page.getByRole('dialog', { name: 'New signing secret' }).waitFor()
    await focused(page, 'dialog .keyshow button.copy')
    await page.keyboard.press('Escape')
    await page.getByRole('dialog').waitFor({ state: 'hidden' })
    await focused(page, rotate)
    assert.notEqual((await onlyWebhook(a)).secret_hint, undefined)

    await visit(page, `/projects/${a.projectId}/environments`, 'Environments and keys')
    await page.locator('#origins-any').focus()
    await page.keyboard.press('ArrowDown')
    await page.locator('#origin-new').focus()
    await page.keyboard.type('https://kb.example')
    await page.keyboard.press('Enter')
    await page.locator('li code', { hasText: 'https://kb.example' }).waitFor()
    assert.equal((await apiCall(a, 'PATCH', '', { name: 'Renamed elsewhere' })).status, 200)
    await page.getByRole('button', { name: 'Save allowed origins' }).focus()
    await page.keyboard.press('Enter')
    const conflict = page.getByRole('alert').filter({ hasText: "Someone else changed this project's settings" })
    await conflict.waitFor()
    await conflict.getByRole('button', { name: 'Re-apply my change' }).focus()
    await page.keyboard.press('Enter')
    await page.getByText('Allowed origins saved').waitFor()
    assert.deepEqual(await originsOf(a), ['https://kb.example'])
    assert.deepEqual(pageErrors(cp), [])
    await cp.context.close()
  })

  for (const [size, viewport] of [['1280×800', DESKTOP], ['390×844', PHONE]] as const) {
    it(`axe-core at ${size}: the origins conflict, the rename conflict, the rotate confirmation and the secret shown; nothing wider than the screen`, async () => {
      const a = await account()
      const cp = await openConsole(rig, a, viewport)
      const { page } = cp
      const found: string[] = []
      const check = async (name: string) => {
        for (const v of await axeViolations(page)) found.push(`${name}: ${v}`)
        const w = await page.evaluate(() => document.documentElement.scrollWidth)
        assert.ok(w <= viewport.width, `${name}: ${w} px wide`)
        assert.equal(await page.locator('[style]').count(), 0, `${name}: an element has a style attribute`)
      }
      await visit(page, `/projects/${a.projectId}/environments`, 'Environments and keys')
      const editor = originsEditor(page)
      await addOrigin(editor, 'https://mine.example')
      assert.equal((await apiCall(a, 'PATCH', '', { allowed_origins: ['https://theirs.example'] })).status, 200)
      await editor.getByRole('button', { name: 'Save allowed origins' }).click()
      await editor.getByRole('alert').filter({ hasText: 'Someone else changed' }).waitFor()
      await check('origins conflict')

      await visit(page, '/', 'Projects')
      await page.getByRole('button', { name: 'Rename Default' }).click()
      await page.getByRole('dialog').getByLabel('New name').fill('Mine')
      assert.equal((await apiCall(a, 'PATCH', '', { name: 'Theirs' })).status, 200)
      await page.getByRole('dialog').getByRole('button', { name: 'Rename', exact: true }).click()
      await page.getByRole('dialog').getByRole('alert').waitFor()
      await check('rename conflict')
      await page.keyboard.press('Escape')
      await page.getByRole('dialog').waitFor({ state: 'hidden' })

      await visit(page, `/projects/${a.projectId}/webhooks`, 'Change webhooks')
      await check('webhooks with Rotate secret…')
      await page.getByRole('button', { name: `Rotate secret of the webhook ${HOOK}` }).click()
      await page.getByRole('dialog').getByText('stops signing at once').waitFor()
      await check('rotate confirmation')
      await page.getByRole('dialog').getByRole('button', { name: 'Rotate secret' }).click()
      await page.getByRole('dialog', { name: 'New signing secret' }).locator('code.secret').waitFor()
      await check('new secret shown')
      assert.deepEqual(found, [])
      assert.deepEqual(await cspViolations(page), [])
      assert.deepEqual(pageErrors(cp), [])
      await cp.context.close()
    })
  }
})
