// The flags console end to end in Chromium against a real flags service (workers running, so
// webhook deliveries and usage counts happen): sign-up and sign-in, projects, creating and
// targeting a flag with the forms, the API's own refusal shown next to the field, the playground,
// history with revert, usage, environments and keys, change webhooks. Each screen's screenshot is
// written to docs/console/.
import assert from 'node:assert/strict'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { apiCall, consoleAccount, cspViolations, openConsole, shot, startConsole, visit, type ConsoleRig, type ConsolePage } from './helpers/console.ts'
import type { FlagsAccount } from './helpers/flags.ts'

describe('flags console: every flow end to end (Chromium)', function () {
  this.timeout(60_000)
  let rig: ConsoleRig
  let acc: FlagsAccount
  let cp: ConsolePage
  before(async () => {
    rig = await startConsole({ workers: true, env: { FLAGS_USAGE_FLUSH_MS: '100' } })
    acc = await consoleAccount(rig)
    // Made before the browser opens the project: a segment to target and a second environment.
    assert.equal((await apiCall(acc, 'POST', '/segments', { name: 'staff', conditions: [{ attribute: 'email', operator: 'ends_with', value: '@example.com' }] })).status, 201)
    assert.equal((await apiCall(acc, 'POST', '/environments', { name: 'staging' })).status, 201)
    cp = await openConsole(rig, acc)
  })
  after(async () => {
    if (cp) assert.deepEqual(await cspViolations(cp.page), [], 'CSP violations')
    await rig?.stop()
  })

  it('sign up: the key is shown once with a copy button, then it opens a session; sign out; sign in with the key', async () => {
    const { page, context } = await openConsole(rig, null)
    await context.grantPermissions(['clipboard-read', 'clipboard-write'])
    await page.goto('/')
    await page.waitForURL('**/sign-in')
    await page.getByLabel('E-mail').fill(`console-${Date.now()}@example.com`)
    await shot(page, 'sign-in')
    await page.getByRole('button', { name: 'Sign up' }).click()
    const key = (await page.locator('code.secret').textContent())!
    assert.match(key, /^fb_/)
    await page.getByRole('button', { name: 'Copy API key' }).click()
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), key)
    await page.getByRole('button', { name: /I have saved it/ }).click()
    await page.getByRole('heading', { level: 1, name: 'Flags' }).waitFor()
    // The key is not kept by the page: only the HttpOnly cookie.
    assert.equal(await page.evaluate(() => localStorage.length + sessionStorage.length), 0)
    assert.equal(await page.evaluate(() => document.cookie), '')
    await page.getByRole('button', { name: 'Sign out' }).click()
    await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor()
    await page.goto('/projects')
    await page.waitForURL('**/sign-in')
    await page.getByLabel('API key', { exact: true }).fill('fb_not-a-key')
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.getByText('That API key is not valid (or was revoked).').waitFor()
    await page.getByLabel('API key', { exact: true }).fill(key)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.getByRole('heading', { level: 1, name: 'Projects' }).waitFor()
    await context.close()
  })

  it('projects: create (SDK key shown once), rename, delete after a confirmation naming what is lost', async () => {
    const { page } = cp
    await visit(page, '/projects', 'Projects')
    await page.getByLabel('Project name').fill('Checkout')
    await page.getByRole('button', { name: 'Create project' }).click()
    await page.getByText(/Project Checkout created/).waitFor()
    assert.match((await page.locator('.keyshow code.secret').textContent())!, /^fbsdk_/)
    await page.getByRole('button', { name: 'Rename Checkout' }).click()
    await page.getByLabel('New name').fill('Checkout v2')
    await page.getByRole('button', { name: 'Rename', exact: true }).click()
    await page.getByRole('rowheader', { name: 'Checkout v2' }).waitFor()
    await shot(page, 'projects')
    await page.getByRole('button', { name: 'Delete Checkout v2' }).click()
    const dialog = page.getByRole('dialog')
    assert.match((await dialog.textContent())!, /deletes 0 flags.*environments.*SDK and server keys.*segments, change webhooks and audit history/s)
    const confirm = dialog.getByRole('button', { name: 'Delete project for good' })
    assert.equal(await confirm.isDisabled(), true, 'enabled before the name is typed')
    await dialog.getByLabel(/Type the project's name/).fill('Checkout v2')
    await confirm.click()
    await page.getByRole('rowheader', { name: 'Checkout v2' }).waitFor({ state: 'detached' })
    const list = await apiCall(acc, 'GET', '/../../projects')
    assert.deepEqual(list.json.projects.map((p: any) => p.name), ['Default'])
  })

  const id = (path: string) => `#f-${path.replace(/[^A-Za-z0-9_-]/g, '_')}`

  it('flag: created typed with tags, targeted with rules (list, semver, segment, percent rollout, regex, weighted variants with stickiness); our checks and the API refusal show next to the field', async () => {
    const { page } = cp
    await visit(page, `/projects/${acc.projectId}`, 'Flags')
    await page.getByRole('button', { name: 'New flag' }).click()
    const dialog = page.getByRole('dialog', { name: 'New flag' })
    await dialog.getByLabel('Key').fill('new checkout')
    await dialog.getByRole('button', { name: 'Create flag' }).click()
    await dialog.getByText('1–128 letters, digits, ".", "_" or "-"').waitFor()
    await dialog.getByLabel('Key').fill('new-checkout')
    await dialog.getByLabel('Tags').fill('checkout, web')
    await dialog.getByRole('button', { name: 'Create flag' }).click()
    await page.getByRole('heading', { level: 1, name: 'new-checkout' }).waitFor()

    await page.getByRole('button', { name: 'Add rule' }).click()
    await page.locator(id('rules[0].conditions[0]') + '-attribute').fill('country')
    await page.locator(id('rules[0].conditions[0]') + '-value').fill('DE\nAT')
    await page.getByRole('button', { name: 'Add condition to rule 1' }).click()
    await page.locator(id('rules[0].conditions[1]') + '-attribute').fill('app_version')
    await page.locator(id('rules[0].conditions[1]') + '-operator').selectOption('semver_gte')
    await page.locator(id('rules[0].conditions[1]') + '-value').fill('v2')
    await page.locator(id('rules[0]') + '-seg-staff').check()
    await page.getByRole('button', { name: 'Save production' }).click()
    // Our own check, next to the field, which takes focus.
    await page.locator(id('rules[0].conditions[1]') + '-value-error').getByText('Not a SemVer 2.0.0 version').waitFor()
    await page.waitForFunction(() => document.activeElement?.id === 'f-rules_0__conditions_1_-value', null, { timeout: 5_000 })
    await page.locator(id('rules[0].conditions[1]') + '-value').fill('2.0.0')

    await page.getByRole('button', { name: 'Add rule' }).click()
    await page.locator(id('rules[1].conditions[0]') + '-operator').selectOption('percent')
    await page.locator(id('rules[1].conditions[0]') + '-value').fill('30')

    await page.getByRole('button', { name: 'Add rule' }).click()
    await page.locator(id('rules[2].conditions[0]') + '-attribute').fill('email')
    await page.locator(id('rules[2].conditions[0]') + '-operator').selectOption('matches')
    await page.locator(id('rules[2].conditions[0]') + '-value').fill('x{2000}')
    await page.getByRole('button', { name: 'Save production' }).click()
    // Valid for JavaScript, not for RE2: the API's own message, next to the field.
    await page.locator(id('rules[2].conditions[0]') + '-value-error').getByText(/rules\[2\]\.conditions\[0\]\.value must be a valid RE2 regular expression/).waitFor()
    await page.locator(id('rules[2].conditions[0]') + '-value').fill('^qa-')
    await page.locator(id('rules[2]') + '-mode-variants').check()
    await page.locator(id('rules[2]') + '-v0-name').fill('treatment')
    await page.locator(id('rules[2]') + '-v0-weight').fill('60')
    await page.getByRole('button', { name: 'Add variant' }).click()
    await page.locator(id('rules[2]') + '-v1-name').fill('control')
    await page.locator(id('rules[2]') + '-v1-weight').fill('40')
    await page.locator(id('rules[2]') + '-v1-value').selectOption('false')
    await page.locator(id('rules[2]') + '-stickiness').fill('account_id')
    await page.getByRole('button', { name: 'Save production' }).click()
    await page.getByText('Saved new-checkout in production').waitFor()
    await shot(page, 'flag-page')

    const f = (await apiCall(acc, 'GET', '/flags/new-checkout')).json
    assert.equal(f.type, 'boolean')
    assert.deepEqual(f.tags, ['checkout', 'web'])
    assert.deepEqual(f.rules, [
      { conditions: [{ attribute: 'country', operator: 'in', value: ['DE', 'AT'] }, { attribute: 'app_version', operator: 'semver_gte', value: '2.0.0' }], segments: ['staff'], value: true },
      { conditions: [{ attribute: 'user_id', operator: 'percent', value: 30 }], value: true },
      { conditions: [{ attribute: 'email', operator: 'matches', value: '^qa-' }], variants: [{ name: 'treatment', weight: 60, value: true }, { name: 'control', weight: 40, value: false }], stickiness: 'account_id' },
    ])
  })

  it('flag: on/off per environment, each its own change', async () => {
    const { page } = cp
    await visit(page, `/projects/${acc.projectId}/flags/new-checkout`, 'new-checkout')
    await page.getByLabel('On in staging').check()
    await page.getByText('new-checkout is on in staging').waitFor()
    assert.equal((await apiCall(acc, 'GET', '/flags/new-checkout?environment=staging')).json.enabled, true)
    assert.equal((await apiCall(acc, 'GET', '/flags/new-checkout')).json.enabled, false)
  })

  it('flags list: search as you type, filters by type, state per environment and tag, counts', async () => {
    const { page } = cp
    for (const [key, type, tags] of [['dark-mode', 'boolean', ['ui']], ['price-tier', 'string', []], ['max-items', 'number', ['checkout']]] as const)
      assert.equal((await apiCall(acc, 'POST', '/flags', { key, type, default_value: type === 'boolean' ? false : type === 'number' ? 3 : 'a', tags })).status, 201)
    await visit(page, `/projects/${acc.projectId}`, 'Flags')
    await page.getByText('4 of 4 flags').waitFor()
    await page.getByLabel('Search', { exact: true }).pressSequentially('new-')
    await page.getByText('1 of 4 flags').waitFor()
    assert.deepEqual(await page.locator('#flags-table tbody th a').allTextContents(), ['new-checkout'])
    await page.getByLabel('Search', { exact: true }).fill('')
    await page.getByLabel('Tag').selectOption('checkout')
    assert.deepEqual(await page.locator('#flags-table tbody th a').allTextContents(), ['max-items', 'new-checkout'])
    await page.getByLabel('Tag').selectOption('')
    await page.getByLabel('Environment', { exact: true }).selectOption('staging')
    await page.getByLabel('State there').selectOption('on')
    assert.deepEqual(await page.locator('#flags-table tbody th a').allTextContents(), ['new-checkout'])
    await page.getByLabel('State there').selectOption('')
    await page.getByLabel('Type').selectOption('number')
    assert.deepEqual(await page.locator('#flags-table tbody th a').allTextContents(), ['max-items'])
    await page.getByLabel('Type').selectOption('')
    await shot(page, 'flags-list')
  })

  it('playground: one context, every environment side by side with value, reason and the rule that matched', async () => {
    const { page } = cp
    // Rules were saved in production: on there; staging is on with no rules of its own.
    assert.equal((await apiCall(acc, 'PUT', '/flags/new-checkout', { enabled: true })).status, 200)
    await visit(page, `/projects/${acc.projectId}/playground`, 'Playground')
    await page.getByLabel('Context (JSON)').fill('{"targetingKey": "u-1", "country": "DE", "app_version": "2.1.0", "email": "ann@example.com"}')
    await page.getByLabel('Only this flag (optional)').fill('new-checkout')
    await page.getByRole('button', { name: /Evaluate in 2 environments/ }).click()
    const card = page.locator('section.card', { has: page.getByRole('heading', { name: 'new-checkout' }) })
    await card.waitFor()
    const envs = await card.locator('.result-env').allTextContents()
    assert.equal(envs.length, 2)
    assert.equal(envs[0], 'productionValuetrueVariant—ReasonTARGETING_MATCHMatchedRule 1: country is one of DE, AT and app_version version ≥ 2.0.0 and in segment staff')
    assert.equal(envs[1], 'stagingValuefalseVariant—ReasonDEFAULTMatchedno rule (default)')
    await shot(page, 'playground')
  })

  it('history: readable diffs with who and when; revert to an earlier version', async () => {
    const { page } = cp
    await visit(page, `/projects/${acc.projectId}/flags/new-checkout/history`, 'new-checkout: history')
    const first = page.locator('ol.history > li').first()
    assert.match((await first.textContent())!, /updated in production.*by fb_.*production › enabled: false → true/)
    assert.match((await page.locator('ol.history > li').nth(1).textContent())!, /updated in staging.*staging › enabled: false → true/)
    await shot(page, 'history')
    // The entry of staging's switch (the second newest) is the version to go back to: production off again.
    await page.locator('ol.history > li').nth(1).getByRole('button', { name: /Revert to this version/ }).click()
    await page.getByRole('dialog').getByRole('button', { name: 'Revert' }).click()
    await page.getByText(/new-checkout reverted to the version of/).waitFor()
    assert.equal((await apiCall(acc, 'GET', '/flags/new-checkout')).json.enabled, false)
    assert.equal((await apiCall(acc, 'GET', '/flags/new-checkout?environment=staging')).json.enabled, true)
    assert.equal((await apiCall(acc, 'GET', '/flags/new-checkout')).json.rules.length, 3)
  })

  it('usage: evaluations per hour per environment as a chart, and the variant split', async () => {
    const { page } = cp
    await apiCall(acc, 'PUT', '/flags/new-checkout', { enabled: true })
    for (const ctx of [{ user_id: 'a', country: 'FR' }, { user_id: 'b', country: 'FR' }, { email: 'qa-1@x.io', account_id: '7', user_id: 'zz-1' }]) {
      const r = await fetch(`${rig.root}/api/v1/evaluate`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ sdk_key: acc.sdkKey, flags: ['new-checkout'], context: ctx }) })
      assert.equal(r.status, 200)
    }
    // Counts reach the store within the flush interval (100 ms here): reload until they show.
    let caption = ''
    let api: any
    for (let i = 0; i < 50 && !(api?.totals.service >= 3); i++) {
      if (i) await page.waitForTimeout(200)
      api = (await apiCall(acc, 'GET', '/flags/new-checkout/usage?period=hour&hours=24')).json
    }
    await visit(page, `/projects/${acc.projectId}/flags/new-checkout/usage`, 'new-checkout: usage')
    // Three evaluations made, three shown (the rules served them as rule-1, rule-1 and a variant).
    caption = (await page.locator('caption', { hasText: 'production:' }).textContent()) ?? ''
    assert.equal(caption, 'production: 3 evaluations in 24 hours (3 on the service, 0 in process)')
    const names = await page.locator('table', { has: page.locator('caption', { hasText: 'production:' }) }).locator('tbody th').allTextContents()
    assert.deepEqual(names.sort(), Object.keys(api.totals.variants).sort())
    const bars = await page.locator('.chart svg[role=img] rect.bar-0').evaluateAll((rs) => rs.map((r) => Number(r.getAttribute('height'))))
    assert.equal(bars.length, 24)
    assert.equal(bars.filter((h) => h > 0).length, 1, 'one hour with evaluations')
    assert.ok((await page.locator('tbody th').allTextContents()).length >= 1)
    await shot(page, 'usage')
    // The list's "not evaluated in N days" filter leaves out the flag evaluated just now. Its time is
    // written after the usage counts (best effort, same flush): wait until the list has it.
    for (let i = 0; i < 200; i++) {
      const list = (await apiCall(acc, 'GET', '/flags')).json as { flags: { key: string; last_evaluated_at: string | null }[] }
      if (list.flags.find((f) => f.key === 'new-checkout')?.last_evaluated_at) break
      await new Promise((r) => setTimeout(r, 100))
    }
    await visit(page, `/projects/${acc.projectId}`, 'Flags')
    await page.getByLabel('Not evaluated in (days)').fill('1')
    await page.getByText('3 of 4 flags').waitFor()
    assert.deepEqual(await page.locator('#flags-table tbody th a').allTextContents(), ['dark-mode', 'max-items', 'price-tier'])
  })

  it('environments and keys: create, rotate with the key shown once and copied, SDK snippets with the key filled in', async () => {
    const { page, context } = cp
    await context.grantPermissions(['clipboard-read', 'clipboard-write'])
    await visit(page, `/projects/${acc.projectId}/environments`, 'Environments and keys')
    await page.getByLabel('Name', { exact: true }).fill('qa')
    await page.getByRole('button', { name: 'Create environment' }).click()
    await page.getByRole('rowheader', { name: 'qa' }).waitFor()
    assert.match((await page.locator('.keyshow code.secret').first().textContent())!, /^fbsdk_/)
    await page.getByRole('button', { name: 'Create server key of production' }).click()
    await page.getByRole('dialog').getByRole('button', { name: 'Create server key' }).click()
    const server = page.locator('.keyshow code.secret', { hasText: 'fbsrv_' })
    await server.waitFor()
    const key = (await server.textContent())!
    const snippet = (await page.locator('pre code', { hasText: 'QueueworksProvider' }).textContent())!
    assert.ok(snippet.includes(`serverKey: '${key}'`), snippet)
    assert.ok(snippet.includes(`url: '${rig.root}'`))
    await page.getByRole('button', { name: 'Copy in-process provider snippet' }).click()
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), snippet)
    // The key works for what the snippet does: reading the flag set.
    assert.equal((await fetch(`${rig.root}/api/v1/flag-set`, { headers: { authorization: `Bearer ${key}` } })).status, 200)
    await shot(page, 'environments')
    await page.getByRole('button', { name: 'Revoke server key of production' }).click()
    await page.getByRole('dialog').getByRole('button', { name: 'Revoke server key' }).click()
    await page.getByRole('button', { name: 'Create server key of production' }).waitFor()
    let status = 200
    for (let i = 0; i < 30 && status !== 401; i++) {
      if (i) await page.waitForTimeout(100)
      status = (await fetch(`${rig.root}/api/v1/flag-set`, { headers: { authorization: `Bearer ${key}` } })).status
    }
    assert.equal(status, 401, 'the revoked key still reads the flag set')
  })

  it('segments: create one with the condition editor, see it offered to rules, delete it', async () => {
    const { page } = cp
    await visit(page, `/projects/${acc.projectId}/segments`, 'Segments')
    await page.getByLabel('Name', { exact: true }).fill('paying')
    await page.locator('#f-conditions_0_-attribute').fill('plan')
    await page.locator('#f-conditions_0_-operator').selectOption('in')
    await page.locator('#f-conditions_0_-value').fill('pro\nbusiness')
    await page.getByRole('button', { name: 'Create segment' }).click()
    await page.getByRole('heading', { name: 'paying' }).waitFor()
    assert.match((await page.locator('section.card', { has: page.getByRole('heading', { name: 'paying' }) }).textContent())!, /plan is one of pro, business/)
    assert.deepEqual((await apiCall(acc, 'GET', '/segments/paying')).json.conditions, [{ attribute: 'plan', operator: 'in', value: ['pro', 'business'] }])
    await visit(page, `/projects/${acc.projectId}/flags/new-checkout`, 'new-checkout')
    await page.locator('#f-rules_0_-seg-paying').waitFor()
    await visit(page, `/projects/${acc.projectId}/segments`, 'Segments')
    await page.getByRole('button', { name: 'Delete the segment paying' }).click()
    await page.getByRole('heading', { name: 'paying' }).waitFor({ state: 'detached' })
    assert.equal((await apiCall(acc, 'GET', '/segments/paying')).status, 404)
  })

  it('change webhooks: create (secret shown once), see the delivery, retry it', async () => {
    const { page } = cp
    const received: string[] = []
    const target = http.createServer((req, res) => {
      received.push(String(req.headers['webhook-id']))
      req.resume()
      res.end('ok')
    })
    await new Promise<void>((r) => target.listen(0, '127.0.0.1', r))
    const url = `http://127.0.0.1:${(target.address() as AddressInfo).port}/hook`
    try {
      await visit(page, `/projects/${acc.projectId}/webhooks`, 'Change webhooks')
      await page.getByLabel('URL').fill(url)
      await page.getByRole('button', { name: 'Create webhook' }).click()
      assert.match((await page.locator('.keyshow code.secret').textContent())!, /^whsec_/)
      await apiCall(acc, 'PUT', '/flags/dark-mode', { enabled: true })
      const hook = page.locator('section.card', { has: page.getByRole('heading', { name: url }) })
      let state = ''
      for (let i = 0; i < 50 && state !== 'delivered'; i++) {
        if (i) await page.waitForTimeout(200)
        await visit(page, `/projects/${acc.projectId}/webhooks`, 'Change webhooks')
        await hook.locator('summary', { hasText: 'Deliveries' }).click()
        state = (await hook.locator('tbody tr .pill').first().textContent({ timeout: 500 }).catch(() => '')) ?? ''
      }
      assert.equal(state, 'delivered')
      await shot(page, 'webhooks')
      await hook.getByRole('button', { name: 'Retry the flag.updated delivery' }).click()
      await page.getByText('Sent again').waitFor()
      for (let i = 0; i < 100 && received.length < 2; i++) await new Promise((r) => setTimeout(r, 100))
      assert.equal(received.length, 2)
      assert.equal(received[1], received[0], 'the retry is the same message')
    } finally {
      target.close()
    }
  })
})
