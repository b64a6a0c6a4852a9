// The flags console's project settings that the management API has, end to end in Chromium:
// renaming an environment (production stays as it is), the project's allowed origins (the CORS
// allow-list of browser evaluation), editing, pausing and resuming a change webhook. Each: the
// success path checked against the API afterwards, our check before sending, a refusal only the
// service can make shown under its field with nothing changed, the keyboard alone, and axe-core
// at 1280×800 and 390×844 under the strict CSP. The service refuses private webhook addresses here
// (OUTBOUND_ALLOW_PRIVATE=false), so a loopback URL is such a refusal. The console's copies of
// the API's checks are compared with the API's own first, without a browser. And the flags list
// keeps a search typed before the project's environments arrived.
import assert from 'node:assert/strict'
import type { Page } from 'playwright-core'
import { axeViolations } from './helpers/a11y.ts'
import { apiCall, consoleAccount, cspViolations, DESKTOP, openConsole, PHONE, shot, startConsole, visit, type ConsoleRig, tabToSelector, pageErrors, focusOn } from './helpers/console.ts'
import type { FlagsAccount } from './helpers/flags.ts'
import { ENVIRONMENT_NAME_RE } from '../src/flags/environment-routes.ts'
import { allowedOriginsSchema } from '../src/flags/flag-schema.ts'
import { FLAG_EVENT_TYPES } from '../src/flags/changes/change-hook-store.ts'
import { checkUrlShape } from '../src/platform/outbound/safe-fetch.ts'
import { environmentNameProblem, originOf, WEBHOOK_EVENTS, webhookUrlProblem } from '../src/console/flags/settings-checks.ts'

const HOOK = 'https://hooks.example.com/flags'

/** The environments' names as the API lists them. */
const envNames = async (a: FlagsAccount) => ((await apiCall(a, 'GET', '/environments')).json.environments as Array<{ name: string }>).map((e) => e.name)
const originsOf = async (a: FlagsAccount) => (await apiCall(a, 'GET', '')).json.allowed_origins as string[]
const onlyWebhook = async (a: FlagsAccount) => {
  const list = (await apiCall(a, 'GET', '/webhooks')).json.webhooks
  assert.equal(list.length, 1)
  return list[0]
}

/** Errors of the page but the browser's own line for each 4xx answer (the refusals these tests ask for). */

const tabTo = (page: Page, target: string, max = 120, back = false) => tabToSelector(page, target, { max, back })

const focused = focusOn

describe('flags console: environment rename, allowed origins, webhook edit (Chromium)', function () {
  this.timeout(90_000)
  let rig: ConsoleRig
  before(async () => {
    rig = await startConsole({ env: { OUTBOUND_ALLOW_PRIVATE: 'false' } })
  })
  after(async () => {
    await rig?.stop()
  })

  /** An account with a staging environment, a flag on only in staging, and a webhook of production. */
  async function account(): Promise<FlagsAccount> {
    const a = await consoleAccount(rig)
    const made = [
      await apiCall(a, 'POST', '/environments', { name: 'staging' }),
      await apiCall(a, 'POST', '/flags', { key: 'dark-mode', type: 'boolean', default_value: false }),
      await apiCall(a, 'PUT', '/flags/dark-mode?environment=staging', { enabled: true }),
      await apiCall(a, 'POST', '/webhooks', { url: HOOK, description: 'deploys' }),
    ]
    assert.deepEqual(made.map((r) => r.status), [201, 201, 200, 201], JSON.stringify(made.map((r) => r.json)))
    return a
  }

  it('the console checks names, origins and webhook URLs as the API does, and offers the API’s webhook events', () => {
    const names = ['staging', 'qa', 'a', '0', 'pre-prod_2', '-x', '_x', 'Staging', 'pre prod', 'a'.repeat(32), 'a'.repeat(33), '', 'ä']
    assert.deepEqual(
      names.filter((n) => (environmentNameProblem(n) === null) !== ENVIRONMENT_NAME_RE.test(n)),
      [],
    )
    const origins = [
      'https://app.example.com', 'HTTPS://App.Example.com:443', 'https://app.example.com/', 'http://localhost:5173', 'http://[::1]:8080', 'https://xn--bcher-kva.example',
      'https://app.example.com/login', 'https://app.example.com?x=1', 'https://*.example.com', 'https://user@app.example.com', 'app.example.com', 'file:///tmp/x',
      'capacitor://localhost', 'chrome-extension://abcdefghijklmnop', 'javascript://x', 'https://app.example.com:99999', ' https://app.example.com ', '', 'http://a b',
    ]
    const disagree = origins.filter((o) => {
      const api = allowedOriginsSchema.safeParse([o])
      return JSON.stringify(api.success ? api.data : null) !== JSON.stringify(originOf(o) === undefined ? null : [originOf(o)])
    })
    assert.deepEqual(disagree, [])
    const urls = ['https://ci.example.com/flag-changes', 'http://127.0.0.1:9/hook', 'ftp://x.example.com/', 'https://u:p@x.example.com/', 'not a url', 'https://x.example.com/?a=1#b', 'mailto:x@example.com']
    const shape = (u: string) => {
      try {
        checkUrlShape(u)
        return true
      } catch {
        return false
      }
    }
    assert.deepEqual(urls.filter((u) => (webhookUrlProblem(u) === null) !== shape(u)), [])
    assert.deepEqual(WEBHOOK_EVENTS, [...FLAG_EVENT_TYPES])
  })

  it('rename an environment: our check first, then the list, the snippet selector and the flag pages use the new name; production is not offered', async () => {
    const a = await account()
    const cp = await openConsole(rig, a)
    const { page } = cp
    await visit(page, `/projects/${a.projectId}/environments`, 'Environments and keys')
    await page.getByRole('rowheader', { name: 'staging' }).waitFor()
    // The flags list was looking at staging: after the rename it looks at an environment that exists.
    await page.getByRole('link', { name: 'Flags', exact: true }).click()
    await page.getByRole('heading', { level: 1, name: 'Flags' }).waitFor()
    await page.getByLabel('Environment').selectOption('staging')
    await page.getByRole('link', { name: 'Environments & keys' }).click()
    await page.getByRole('heading', { level: 1, name: 'Environments and keys' }).waitFor()
    assert.equal(await page.getByRole('button', { name: 'Rename production' }).count(), 0)
    await page.getByText("production cannot be renamed or deleted: the project's own SDK key").waitFor()

    await page.getByRole('button', { name: 'Rename staging' }).click()
    const dialog = page.getByRole('dialog', { name: 'Rename the environment staging' })
    await dialog.waitFor()
    assert.equal(await dialog.getByLabel('New name').inputValue(), 'staging')
    await dialog.getByLabel('New name').fill('Pre Prod')
    await dialog.getByRole('button', { name: 'Rename environment' }).click()
    await page.locator('#rename-env-error', { hasText: 'lower-case letters, digits' }).waitFor()
    assert.equal(await dialog.getByLabel('New name').getAttribute('aria-invalid'), 'true')
    assert.deepEqual(await envNames(a), ['production', 'staging'])

    await dialog.getByLabel('New name').fill('preprod')
    await dialog.getByRole('button', { name: 'Rename environment' }).click()
    await dialog.waitFor({ state: 'hidden' })
    await page.getByRole('rowheader', { name: 'preprod' }).waitFor()
    await page.getByText('Environment staging renamed to preprod').waitFor()
    assert.equal(await page.getByRole('rowheader', { name: 'staging' }).count(), 0)
    assert.deepEqual(await page.locator('#snippet-env option').allTextContents(), ['production', 'preprod'])
    assert.deepEqual(await envNames(a), ['production', 'preprod'])
    assert.equal((await apiCall(a, 'GET', '/flags/dark-mode?environment=preprod')).json.enabled, true)

    await page.getByRole('link', { name: 'Flags', exact: true }).click()
    await page.getByText('1 of 1 flag').waitFor()
    assert.deepEqual(await page.locator('#filter-env option').allTextContents(), ['production', 'preprod'])
    assert.equal(await page.locator('#filter-env').inputValue(), 'production')
    await visit(page, `/projects/${a.projectId}/flags/dark-mode`, 'dark-mode')
    assert.equal(await page.getByLabel('On in preprod').isChecked(), true)
    assert.equal(await page.getByLabel('On in staging').count(), 0)
    assert.deepEqual(await cspViolations(page), [])
    assert.deepEqual(pageErrors(cp), [])
    await cp.context.close()
  })

  it('flags list: a search typed while the project’s environments are still loading is kept when they arrive', async () => {
    const a = await account()
    assert.equal((await apiCall(a, 'POST', '/flags', { key: 'price-tier', type: 'string', default_value: 'a' })).status, 201)
    const cp = await openConsole(rig, a)
    const { page } = cp
    // The environments' answer is held until the search is typed: the order a slow service gives.
    let release!: () => void
    const held = new Promise<void>((r) => (release = r))
    await page.route(`**/api/v1/projects/${a.projectId}/environments`, async (route) => {
      await held
      await route.continue()
    })
    await visit(page, `/projects/${a.projectId}`, 'Flags')
    await page.getByLabel('Search', { exact: true }).fill('dark')
    release()
    await page.locator('#flag-counts', { hasText: /of 2 flags/ }).waitFor()
    assert.equal(await page.getByLabel('Search', { exact: true }).inputValue(), 'dark')
    assert.match((await page.locator('#flag-counts').textContent())!, /^1 of 2 flags/)
    assert.deepEqual(await page.locator('#flags-table tbody th a').allTextContents(), ['dark-mode'])
    await cp.context.close()
  })

  it('rename refused by the service (the name is taken): its message under the field, nothing renamed', async () => {
    const a = await account()
    assert.equal((await apiCall(a, 'POST', '/environments', { name: 'qa' })).status, 201)
    const cp = await openConsole(rig, a)
    const { page } = cp
    await visit(page, `/projects/${a.projectId}/environments`, 'Environments and keys')
    await page.getByRole('button', { name: 'Rename staging' }).click()
    const dialog = page.getByRole('dialog', { name: 'Rename the environment staging' })
    await dialog.getByLabel('New name').fill('qa')
    await dialog.getByRole('button', { name: 'Rename environment' }).click()
    await page.locator('#rename-env-error', { hasText: 'An environment named "qa" already exists in this project' }).waitFor()
    assert.equal(await dialog.isVisible(), true)
    assert.equal(await dialog.getByLabel('New name').getAttribute('aria-describedby'), 'rename-env-hint rename-env-error')
    await shot(page, 'environment-rename', false)
    assert.deepEqual(await envNames(a), ['production', 'staging', 'qa'])
    assert.equal((await apiCall(a, 'GET', '/flags/dark-mode?environment=staging')).json.enabled, true)
    assert.deepEqual(await cspViolations(page), [])
    assert.deepEqual(pageErrors(cp), [])
    await cp.context.close()
  })

  it('allowed origins: our check and normalisation, add, remove, save; back to any origin', async () => {
    const a = await account()
    const cp = await openConsole(rig, a)
    const { page } = cp
    await visit(page, `/projects/${a.projectId}/environments`, 'Environments and keys')
    const editor = page.locator('section.card', { has: page.getByRole('heading', { name: 'Allowed origins (web pages)' }) })
    await editor.getByText('Browsers let only pages of these origins evaluate').waitFor()
    assert.equal(await editor.getByLabel('Any origin (*)').isChecked(), true)
    await editor.getByLabel('Only the origins listed').check()
    await editor.getByText('No origin listed: no web page can evaluate').waitFor()

    const field = editor.getByLabel('Origin', { exact: true })
    await field.fill('https://app.example.com/login')
    await editor.getByRole('button', { name: 'Add origin' }).click()
    await page.locator('#origin-new-error', { hasText: 'no path, query or wildcard' }).waitFor()
    await field.fill('HTTPS://App.Example.com:443')
    await field.press('Enter')
    await editor.getByRole('listitem').filter({ hasText: 'https://app.example.com' }).waitFor()
    assert.equal(await page.locator('#origin-new-error').count(), 0)
    for (const o of ['http://localhost:5173', 'https://admin.example.com']) {
      await field.fill(o)
      await field.press('Enter')
    }
    await field.fill('https://app.example.com/')
    await field.press('Enter')
    await page.locator('#origin-new-error', { hasText: 'https://app.example.com is already in the list' }).waitFor()
    await editor.getByRole('button', { name: 'Remove https://admin.example.com' }).click()
    assert.deepEqual(await editor.locator('li code').allTextContents(), ['https://app.example.com', 'http://localhost:5173'])
    await editor.getByText('Not saved yet').waitFor()
    assert.deepEqual(await originsOf(a), ['*'], 'sent before Save')
    await editor.getByRole('button', { name: 'Save allowed origins' }).click()
    await page.getByText('Allowed origins saved').waitFor()
    assert.deepEqual(await originsOf(a), ['https://app.example.com', 'http://localhost:5173'])
    assert.equal(await editor.getByText('Not saved yet').count(), 0)
    await editor.scrollIntoViewIfNeeded()
    await shot(page, 'allowed-origins', false)

    // Saved lists show again after a reload, and "any origin" is one choice away.
    await visit(page, `/projects/${a.projectId}/environments`, 'Environments and keys')
    await editor.getByRole('button', { name: 'Remove http://localhost:5173' }).waitFor()
    await editor.getByLabel('Any origin (*)').check()
    await editor.getByRole('button', { name: 'Save allowed origins' }).click()
    await page.getByText('Allowed origins saved').waitFor()
    assert.deepEqual(await originsOf(a), ['*'])
    assert.deepEqual(await cspViolations(page), [])
    assert.deepEqual(pageErrors(cp), [])
    await cp.context.close()
  })

  it('allowed origins refused by the service (more than it keeps): its message under the field, the saved list unchanged', async () => {
    const a = await account()
    const hundred = Array.from({ length: 100 }, (_, i) => `https://o${i}.example.com`)
    assert.equal((await apiCall(a, 'PATCH', '', { allowed_origins: hundred })).status, 200)
    const cp = await openConsole(rig, a)
    const { page } = cp
    await visit(page, `/projects/${a.projectId}/environments`, 'Environments and keys')
    const field = page.getByLabel('Origin', { exact: true })
    await field.fill('https://one-more.example.com')
    await field.press('Enter')
    await page.getByRole('button', { name: 'Remove https://one-more.example.com' }).waitFor()
    await page.getByRole('button', { name: 'Save allowed origins' }).click()
    await page.locator('#origin-new-error', { hasText: 'allowed_origins must have at most 100 items' }).waitFor()
    assert.equal(await field.getAttribute('aria-invalid'), 'true')
    assert.deepEqual(await originsOf(a), hundred)
    await page.getByText('Not saved yet').waitFor()
    assert.deepEqual(await cspViolations(page), [])
    assert.deepEqual(pageErrors(cp), [])
    await cp.context.close()
  })

  it('edit a webhook: our checks, then URL, environment, events, description and pause in one save; pause and resume from the list', async () => {
    const a = await account()
    const cp = await openConsole(rig, a)
    const { page } = cp
    await visit(page, `/projects/${a.projectId}/webhooks`, 'Change webhooks')
    await page.getByRole('button', { name: `Edit the webhook ${HOOK}` }).click()
    const dialog = page.getByRole('dialog', { name: 'Edit the webhook' })
    assert.equal(await dialog.getByLabel('URL').inputValue(), HOOK)
    assert.equal(await dialog.getByLabel('Description').inputValue(), 'deploys')
    assert.equal(await dialog.getByLabel('Enabled').isChecked(), true)
    await dialog.getByLabel('URL').fill('ftp://ci.example.com/x')
    for (const ev of WEBHOOK_EVENTS) await dialog.getByLabel(ev, { exact: true }).uncheck()
    await dialog.getByRole('button', { name: 'Save webhook' }).click()
    await page.locator('#edit-hook-url-error', { hasText: 'An http or https URL' }).waitFor()
    await page.locator('#edit-hook-events-error', { hasText: 'Choose at least one event' }).waitFor()
    assert.equal((await onlyWebhook(a)).url, HOOK)

    const url = 'https://ci.example.com/flag-changes'
    await dialog.getByLabel('URL').fill(url)
    for (const ev of ['flag.created', 'flag.updated', 'flag.deleted']) await dialog.getByLabel(ev, { exact: true }).check()
    await dialog.getByLabel('Environment').selectOption('staging')
    await dialog.getByLabel('Description').fill('CI pipeline')
    await dialog.getByLabel('Enabled').uncheck()
    await shot(page, 'webhook-edit', false)
    await dialog.getByRole('button', { name: 'Save webhook' }).click()
    await dialog.waitFor({ state: 'hidden' })
    await page.getByRole('heading', { name: url }).waitFor()
    await page.getByText(/paused: nothing is sent/).waitFor()
    const h = await onlyWebhook(a)
    assert.deepEqual(
      { url: h.url, environment: h.environment, events: h.events, description: h.description, enabled: h.enabled },
      { url, environment: 'staging', events: ['flag.created', 'flag.updated', 'flag.deleted'], description: 'CI pipeline', enabled: false },
    )

    await page.getByRole('button', { name: `Resume the webhook ${url}` }).click()
    await page.getByRole('button', { name: `Pause the webhook ${url}` }).waitFor()
    assert.equal((await onlyWebhook(a)).enabled, true)
    await page.getByRole('button', { name: `Pause the webhook ${url}` }).click()
    await page.getByRole('button', { name: `Resume the webhook ${url}` }).waitFor()
    assert.equal((await onlyWebhook(a)).enabled, false)
    assert.deepEqual(await cspViolations(page), [])
    assert.deepEqual(pageErrors(cp), [])
    await cp.context.close()
  })

  it('webhook edit refused by the service (a private address): its message under the URL, the webhook unchanged', async () => {
    const a = await account()
    const before = await onlyWebhook(a)
    const cp = await openConsole(rig, a)
    const { page } = cp
    await visit(page, `/projects/${a.projectId}/webhooks`, 'Change webhooks')
    await page.getByRole('button', { name: `Edit the webhook ${HOOK}` }).click()
    const dialog = page.getByRole('dialog', { name: 'Edit the webhook' })
    await dialog.getByLabel('URL').fill('http://127.0.0.1:9/hook')
    await dialog.getByLabel('Description').fill('local')
    await dialog.getByRole('button', { name: 'Save webhook' }).click()
    await page.locator('#edit-hook-url-error', { hasText: 'url must point to a public address' }).waitFor()
    assert.equal(await dialog.getByLabel('URL').getAttribute('aria-invalid'), 'true')
    assert.equal(await dialog.isVisible(), true)
    assert.deepEqual(await onlyWebhook(a), before)
    assert.deepEqual(await cspViolations(page), [])
    assert.deepEqual(pageErrors(cp), [])
    await cp.context.close()
  })

  it('keyboard only: rename (Escape closes and returns focus, Enter renames), origins (add, save), webhook (edit, pause)', async () => {
    const a = await account()
    const cp = await openConsole(rig, a)
    const { page } = cp
    await visit(page, `/projects/${a.projectId}/environments`, 'Environments and keys')
    await tabTo(page, 'button[aria-label="Rename staging"]')
    await page.keyboard.press('Enter')
    await page.getByRole('dialog', { name: 'Rename the environment staging' }).waitFor()
    await focused(page, '#rename-env')
    await page.keyboard.press('Escape')
    await page.getByRole('dialog').waitFor({ state: 'hidden' })
    await focused(page, 'button[aria-label="Rename staging"]')
    await page.keyboard.press('Enter')
    await focused(page, '#rename-env')
    await page.keyboard.press('ControlOrMeta+A')
    await page.keyboard.type('preprod')
    await page.keyboard.press('Enter')
    await page.getByRole('rowheader', { name: 'preprod' }).waitFor()
    await focused(page, 'button[aria-label="Rename preprod"]')
    assert.deepEqual(await envNames(a), ['production', 'preprod'])

    // The radio group is one Tab stop; an arrow key picks the other choice.
    await tabTo(page, '#origins-any')
    await page.keyboard.press('ArrowDown')
    assert.equal(await page.locator('#origins-listed').isChecked(), true)
    await tabTo(page, '#origin-new')
    await page.keyboard.type('https://app.example.com')
    await page.keyboard.press('Enter')
    await page.locator('li code', { hasText: 'https://app.example.com' }).waitFor()
    await tabTo(page, 'button[aria-label="Remove https://app.example.com"]', 3, true)
    await tabTo(page, 'button.primary')
    await page.keyboard.press('Enter')
    await page.getByText('Allowed origins saved').waitFor()
    assert.deepEqual(await originsOf(a), ['https://app.example.com'])

    await visit(page, `/projects/${a.projectId}/webhooks`, 'Change webhooks')
    const edit = `button[aria-label="Edit the webhook ${HOOK}"]`
    await tabTo(page, edit)
    await page.keyboard.press('Enter')
    await page.getByRole('dialog', { name: 'Edit the webhook' }).waitFor()
    await focused(page, '#edit-hook-url')
    await page.keyboard.press('Escape')
    await page.getByRole('dialog').waitFor({ state: 'hidden' })
    await focused(page, edit)
    await page.keyboard.press('Enter')
    await focused(page, '#edit-hook-url')
    await tabTo(page, '#edit-hook-description')
    await page.keyboard.press('ControlOrMeta+A')
    await page.keyboard.type('by keyboard')
    await page.keyboard.press('Enter')
    await page.getByRole('dialog').waitFor({ state: 'hidden' })
    await page.getByText(/by keyboard/).waitFor()
    assert.equal((await onlyWebhook(a)).description, 'by keyboard')
    await tabTo(page, `button[aria-label="Pause the webhook ${HOOK}"]`)
    await page.keyboard.press('Enter')
    await page.getByRole('button', { name: `Resume the webhook ${HOOK}` }).waitFor()
    assert.equal((await onlyWebhook(a)).enabled, false)
    assert.deepEqual(await cspViolations(page), [])
    assert.deepEqual(pageErrors(cp), [])
    await cp.context.close()
  })

  for (const [size, viewport] of [['1280×800', DESKTOP], ['390×844', PHONE]] as const) {
    it(`axe-core at ${size}: rename dialog with a refusal, origins editor with an error, webhook edit dialog with errors; no style attribute, nothing wider than the screen, no CSP report`, async () => {
      const a = await account()
      assert.equal((await apiCall(a, 'PATCH', '', { allowed_origins: ['https://app.example.com'] })).status, 200)
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
      await page.getByRole('button', { name: 'Remove https://app.example.com' }).waitFor()
      await check('environments with origins')
      await page.getByLabel('Origin', { exact: true }).fill('https://app.example.com/x')
      await page.getByRole('button', { name: 'Add origin' }).click()
      await page.locator('#origin-new-error').waitFor()
      await check('origin error')
      await page.getByRole('button', { name: 'Rename staging' }).click()
      await page.getByLabel('New name').fill('production')
      await page.getByRole('button', { name: 'Rename environment' }).click()
      await page.locator('#rename-env-error', { hasText: 'already exists' }).waitFor()
      await check('rename dialog with a refusal')
      await page.keyboard.press('Escape')
      await visit(page, `/projects/${a.projectId}/webhooks`, 'Change webhooks')
      await check('webhooks with edit and pause')
      await page.getByRole('button', { name: `Edit the webhook ${HOOK}` }).click()
      await page.getByRole('dialog').getByLabel('URL').fill('http://127.0.0.1:9/hook')
      await page.getByRole('dialog').getByRole('button', { name: 'Save webhook' }).click()
      await page.locator('#edit-hook-url-error').waitFor()
      await check('webhook edit dialog with a refusal')
      assert.deepEqual(found, [])
      assert.deepEqual(await cspViolations(page), [])
      assert.deepEqual(pageErrors(cp), [])
      await cp.context.close()
    })
  }
})
