// The flags console's segment editing and project history, in Chromium against a real flags
// service: a segment's description and conditions edited with the condition editor (checked
// against the API afterwards), our check and the API's refusal shown at the field with nothing
// changed, a stale edit shown as a conflict (reload, or re-apply on the current version), the
// list following changes made through the API; the project's audit screen with who/when, readable
// diffs, links, the API's filters and paging past one page; keyboard use with visible focus;
// axe-core at 1280×800 and 390×844, no inline style, no CSP report. Writes the screenshots
// docs/console/segment-edit.png and docs/console/project-history.png.
import assert from 'node:assert/strict'
import type { Page } from 'playwright-core'
import { axeViolations } from './helpers/a11y.ts'
import { apiCall, consoleAccount, cspViolations, DESKTOP, openConsole, PHONE, shot, startConsole, visit, type ConsoleRig, tabToSelector } from './helpers/console.ts'
import type { FlagsAccount } from './helpers/flags.ts'

const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
const STAFF = [{ attribute: 'email', operator: 'ends_with', value: '@example.com' }]

/** Every entry of the project's history through the API, newest first, walking its pages. */
async function allHistory(acc: FlagsAccount, query = ''): Promise<any[]> {
  const out: any[] = []
  let before: string | null = null
  do {
    const r = await apiCall(acc, 'GET', `/history?limit=200${query}${before ? `&before=${before}` : ''}`)
    assert.equal(r.status, 200, JSON.stringify(r.json))
    out.push(...r.json.history)
    before = r.json.next_before
  } while (before)
  return out
}

/** The form editing segment `name` (its condition fields carry ids prefixed `f-edit-<name>-`). */
const editForm = (page: Page, name: string) => page.locator(`form[data-segment="${name}"]`)
const editId = (name: string, path: string) => `#f-edit-${name}-${path.replace(/[^A-Za-z0-9_-]/g, '_')}`

describe('flags console: editing segments and the project history (Chromium)', function () {
  this.timeout(90_000)
  let rig: ConsoleRig
  let acc: FlagsAccount
  before(async () => {
    rig = await startConsole()
    acc = await consoleAccount(rig)
    const made = [await apiCall(acc, 'POST', '/segments', { name: 'staff', conditions: STAFF })]
    made.push(await apiCall(acc, 'POST', '/segments', { name: 'beta', description: 'Beta testers', conditions: [{ attribute: 'plan', operator: 'in', value: ['beta'] }] }))
    made.push(await apiCall(acc, 'POST', '/environments', { name: 'staging' }))
    made.push(await apiCall(acc, 'POST', '/flags', { key: 'new-checkout', type: 'boolean', enabled: false, default_value: false, rules: [{ conditions: [], segments: ['staff'], value: true }] }))
    assert.deepEqual(made.map((r) => r.status), [201, 201, 201, 201], JSON.stringify(made.map((r) => r.json)))
  })
  after(async () => {
    await rig?.stop()
  })

  it('segment edit: description and conditions changed with the condition editor; the API has them; the list shows them', async () => {
    const { page, context, errors } = await openConsole(rig, acc)
    await visit(page, `/projects/${acc.projectId}/segments`, 'Segments')
    await page.getByRole('button', { name: 'Edit the segment staff' }).click()
    const form = editForm(page, 'staff')
    await form.getByRole('heading', { name: 'Edit segment staff' }).waitFor()
    // The form holds the segment as stored.
    assert.equal(await page.locator(editId('staff', 'conditions[0]') + '-value').inputValue(), '@example.com')
    await form.getByLabel('Description').fill('Our own people')
    await page.locator(editId('staff', 'conditions[0]') + '-value').fill('@queueworks.dev')
    await form.getByRole('button', { name: 'Add condition to staff' }).click()
    await page.locator(editId('staff', 'conditions[1]') + '-attribute').fill('country')
    await page.locator(editId('staff', 'conditions[1]') + '-operator').selectOption('in')
    await page.locator(editId('staff', 'conditions[1]') + '-value').fill('DE\nAT')
    await page.locator(editId('staff', 'conditions[1]') + '-negate').check()
    await form.getByRole('button', { name: 'Save segment staff' }).click()
    await page.getByText('Segment staff saved').waitFor()
    const s = (await apiCall(acc, 'GET', '/segments/staff')).json
    assert.equal(s.description, 'Our own people')
    assert.deepEqual(s.conditions, [
      { attribute: 'email', operator: 'ends_with', value: '@queueworks.dev' },
      { attribute: 'country', operator: 'in', value: ['DE', 'AT'], negate: true },
    ])
    assert.equal(s.version, 2)
    const card = page.getByRole('region', { name: 'Segment staff' })
    await card.getByText('Our own people').waitFor()
    assert.match((await card.textContent())!, /email ends with any of @queueworks\.dev and not country is one of DE, AT/)
    // A change made through the API shows on the open list.
    assert.equal((await apiCall(acc, 'PUT', '/segments/beta', { description: 'Beta testers (EU)' })).status, 200)
    await page.getByRole('region', { name: 'Segment beta' }).getByText('Beta testers (EU)').waitFor()
    assert.deepEqual(await cspViolations(page), [])
    assert.deepEqual(errors, [])
    await context.close()
  })

  it('segment edit: our check and the API’s refusal show at the field, the focus moves there, and nothing is changed', async () => {
    const { page, context } = await openConsole(rig, acc)
    const before = (await apiCall(acc, 'GET', '/segments/beta')).json
    await visit(page, `/projects/${acc.projectId}/segments`, 'Segments')
    await page.getByRole('button', { name: 'Edit the segment beta' }).click()
    const form = editForm(page, 'beta')
    const value = page.locator(editId('beta', 'conditions[0]') + '-value')
    // Ours: an empty list of values.
    await value.fill('')
    await form.getByRole('button', { name: 'Save segment beta' }).click()
    await page.locator(editId('beta', 'conditions[0]') + '-value-error').waitFor()
    await page.waitForFunction(() => document.activeElement?.id === 'f-edit-beta-conditions_0_-value', null, { timeout: 5_000 })
    // The API's: a regular expression RE2 refuses (only the service judges it).
    await page.locator(editId('beta', 'conditions[0]') + '-operator').selectOption('matches')
    await value.fill('x{2000}')
    await form.getByRole('button', { name: 'Save segment beta' }).click()
    const error = page.locator(editId('beta', 'conditions[0]') + '-value-error')
    await error.getByText(/^conditions\[0\]\.value must be a valid RE2 regular expression/).waitFor()
    await form.getByText(/The service refused the change: conditions\[0\]\.value/).waitFor()
    assert.equal(await value.getAttribute('aria-invalid'), 'true')
    await page.waitForFunction(() => document.activeElement?.id === 'f-edit-beta-conditions_0_-value', null, { timeout: 5_000 })
    const after = (await apiCall(acc, 'GET', '/segments/beta')).json
    assert.deepEqual(after, before, 'the refused edit changed the segment')
    await context.close()
  })

  it('segment edit: changed through the API while the form is open — the form says so, saving shows the conflict; reload takes theirs, re-apply puts mine on top', async () => {
    const { page, context } = await openConsole(rig, acc)
    await visit(page, `/projects/${acc.projectId}/segments`, 'Segments')
    await page.getByRole('button', { name: 'Edit the segment beta' }).click()
    const form = editForm(page, 'beta')
    const value = page.locator(editId('beta', 'conditions[0]') + '-value')
    await value.fill('beta\nmine')
    // Someone else's change, made on the version the form was read from.
    const v0 = (await apiCall(acc, 'GET', '/segments/beta')).json.version
    const theirs = await apiCall(acc, 'PUT', '/segments/beta', { conditions: [{ attribute: 'plan', operator: 'in', value: ['beta', 'theirs'] }] }, { 'if-match': `"${v0}"` })
    assert.equal(theirs.status, 200)
    await form.getByText('This segment was just changed elsewhere').waitFor()
    await form.getByRole('button', { name: 'Save segment beta' }).click()
    const conflict = form.getByRole('alert').filter({ hasText: 'Someone else changed this segment' })
    await conflict.waitFor()
    assert.match((await conflict.textContent())!, new RegExp(`version ${v0 + 1} is current.*Their version: plan is one of beta, theirs.*not applied`, 's'))
    // Not applied over theirs.
    assert.deepEqual((await apiCall(acc, 'GET', '/segments/beta')).json.conditions[0].value, ['beta', 'theirs'])
    await conflict.scrollIntoViewIfNeeded()
    await shot(page, 'segment-edit', false)
    // Reload: the form shows their version, my edit dropped.
    await conflict.getByRole('button', { name: 'Reload (drop my change)' }).click()
    await conflict.waitFor({ state: 'detached' })
    assert.equal(await value.inputValue(), 'beta\ntheirs')
    // Edit again; they change it again; this time re-apply mine on top of theirs.
    await value.fill('beta\nmine')
    assert.equal((await apiCall(acc, 'PUT', '/segments/beta', { description: 'changed again' })).status, 200)
    await form.getByRole('button', { name: 'Save segment beta' }).click()
    await conflict.waitFor()
    await conflict.getByRole('button', { name: 'Re-apply my change' }).click()
    await page.getByText('Segment beta saved').waitFor()
    const s = (await apiCall(acc, 'GET', '/segments/beta')).json
    assert.deepEqual(s.conditions, [{ attribute: 'plan', operator: 'in', value: ['beta', 'mine'] }])
    assert.equal(s.description, 'changed again', 'their description was overwritten')
    assert.equal(s.version, v0 + 3)
    await context.close()
  })

  it('segment edit: deleted through the API while the form is open — the screen says so', async () => {
    assert.equal((await apiCall(acc, 'POST', '/segments', { name: 'gone', conditions: STAFF })).status, 201)
    const { page, context } = await openConsole(rig, acc)
    await visit(page, `/projects/${acc.projectId}/segments`, 'Segments')
    await page.getByRole('button', { name: 'Edit the segment gone' }).click()
    await page.locator(editId('gone', 'conditions[0]') + '-value').fill('@x.io')
    assert.equal((await apiCall(acc, 'DELETE', '/segments/gone')).status, 204)
    await page.getByRole('alert').getByText('Segment gone was deleted').waitFor()
    await page.getByRole('button', { name: 'Close' }).click()
    await page.getByText('Segment gone was deleted').waitFor({ state: 'detached' })
    await context.close()
  })

  it('project history: every change made through the API, newest first, with who/when and readable diffs, links, filters and paging past one page', async () => {
    // More entries than one page (50): a webhook, then the flag turned on and off.
    assert.equal((await apiCall(acc, 'POST', '/webhooks', { url: 'http://127.0.0.1:9/hook' })).status, 201)
    for (let i = 0; i < 44; i++) assert.equal((await apiCall(acc, 'PUT', '/flags/new-checkout?environment=staging', { enabled: i % 2 === 0 })).status, 200)
    const all = await allHistory(acc)
    assert.ok(all.length > 50, `${all.length} entries`)
    const { page, context, errors } = await openConsole(rig, acc)
    await visit(page, `/projects/${acc.projectId}`, 'Flags')
    await page.getByRole('navigation', { name: 'Project' }).getByRole('link', { name: 'History' }).click()
    await page.getByRole('heading', { level: 1, name: 'Project history' }).waitFor()
    assert.equal(new URL(page.url()).pathname, `/projects/${acc.projectId}/history`)
    const items = page.locator('ol.history > li')
    await items.first().waitFor()
    // One page, in the API's order.
    assert.deepEqual(await items.evaluateAll((ls) => ls.map((l) => l.getAttribute('data-entry'))), all.slice(0, 50).map((e) => e.id))
    const email = (await page.locator('.account .who').textContent())!
    const first = items.first()
    const top = all[0]
    assert.equal(top.type, 'flag.updated')
    assert.match((await first.textContent())!, new RegExp(`^Flag new-checkout updated in stagingHistory of new-checkout.*by ${esc(top.actor.api_key.hint)} \\(${esc(email)}\\)staging › enabled: (true → false|false → true)$`))
    assert.equal(await first.locator('time').getAttribute('datetime'), top.at)
    // Older changes, until none are left: every entry the API has, once.
    await page.getByRole('button', { name: 'Older changes' }).click()
    await items.nth(50).waitFor()
    assert.equal(await page.getByRole('button', { name: 'Older changes' }).count(), 0)
    assert.deepEqual(await items.evaluateAll((ls) => ls.map((l) => l.getAttribute('data-entry'))), all.map((e) => e.id))
    // Segments, environments, webhooks with what changed.
    const text = (await items.allTextContents()).join('\n')
    assert.match(text, /Segment beta updated.*conditions › #1 › value › #2: theirs → mine/)
    assert.match(text, /Segment beta updated.*conditions › #1 › value: theirs added/)
    assert.match(text, /Segment gone deleted.*Deleted\./)
    assert.match(text, /Environment staging created/)
    assert.match(text, /Webhook http:\/\/127\.0\.0\.1:9\/hook created/)
    assert.match(text, /Segment staff updated.*description: \(empty\) → Our own people.*conditions: .*country.* added/)
    await shot(page, 'project-history')
    // The flag's own page and history are a link away.
    await first.getByRole('link', { name: 'History of new-checkout' }).click()
    await page.getByRole('heading', { level: 1, name: 'new-checkout: history' }).waitFor()
    await page.goBack()
    await page.getByRole('heading', { level: 1, name: 'Project history' }).waitFor()
    await items.first().getByRole('link', { name: 'new-checkout', exact: true }).click()
    await page.getByRole('heading', { level: 1, name: 'new-checkout' }).waitFor()

    // Filters: the API's kind and type, kept in the address.
    await visit(page, `/projects/${acc.projectId}/history`, 'Project history')
    await page.getByLabel('What changed').selectOption('segment')
    await page.waitForURL(`**/history?kind=segment`)
    const segs = await allHistory(acc, '&kind=segment')
    await page.waitForFunction((n) => document.querySelectorAll('ol.history > li').length === n, segs.length, { timeout: 10_000 })
    assert.deepEqual(await items.evaluateAll((ls) => ls.map((l) => l.getAttribute('data-entry'))), segs.map((e) => e.id))
    await page.getByLabel('Change', { exact: true }).selectOption('segment.deleted')
    await page.waitForURL(`**/history?kind=segment&type=segment.deleted`)
    await page.waitForFunction(() => document.querySelectorAll('ol.history > li').length === 1, null, { timeout: 10_000 })
    assert.match((await items.first().textContent())!, /^Segment gone deleted/)
    // Every type the screen offers is one the API takes.
    await page.getByLabel('What changed').selectOption('')
    const types = await page.locator('#history-type option').evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value).filter(Boolean))
    assert.ok(types.includes('sdk_key.revoked') && types.includes('webhook.deleted'), types.join())
    for (const t of types) assert.equal((await apiCall(acc, 'GET', `/history?type=${t}`)).status, 200, t)
    const kinds = await page.locator('#history-kind option').evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value).filter(Boolean))
    for (const k of kinds) assert.equal((await apiCall(acc, 'GET', `/history?kind=${k}`)).status, 200, k)
    assert.equal(kinds.length, 6)

    // A change made meanwhile goes on top of the open screen.
    await page.getByLabel('What changed').selectOption('')
    await page.waitForURL(/\/history$/)
    await items.first().waitFor()
    assert.equal((await apiCall(acc, 'PATCH', '', { name: 'Renamed' })).status, 200)
    await items.first().getByText(/^Project Renamed updated$/).waitFor()
    assert.match((await items.first().textContent())!, /name: Default → Renamed/)
    assert.deepEqual(await cspViolations(page), [])
    assert.deepEqual(errors, [])
    await context.close()
  })

  const tabTo = (page: Page, target: string, max = 120) => tabToSelector(page, target, { max })

  it('keyboard only: edit a segment and save it; open the project history, filter it and page it; focus always visible', async () => {
    const { page, context } = await openConsole(rig, acc)
    await visit(page, `/projects/${acc.projectId}/segments`, 'Segments')
    await tabTo(page, 'button[aria-label="Edit the segment staff"]')
    await page.keyboard.press('Enter')
    await tabTo(page, '#edit-staff-description')
    await page.keyboard.press('Control+A')
    await page.keyboard.type('Typed with the keyboard')
    await tabTo(page, 'form[data-segment="staff"] button[type=submit]')
    await page.keyboard.press('Enter')
    await page.getByText('Segment staff saved').waitFor()
    assert.equal((await apiCall(acc, 'GET', '/segments/staff')).json.description, 'Typed with the keyboard')

    await visit(page, `/projects/${acc.projectId}`, 'Flags')
    await tabTo(page, `nav a[href="/projects/${acc.projectId}/history"]`)
    await page.keyboard.press('Enter')
    await page.getByRole('heading', { level: 1, name: 'Project history' }).waitFor()
    await tabTo(page, '#history-kind')
    await page.keyboard.press('ArrowDown') // Everything → Flags
    await page.waitForURL('**/history?kind=flag')
    const flags = await allHistory(acc, '&kind=flag')
    await page.waitForFunction((n) => document.querySelectorAll('ol.history > li').length === n, Math.min(flags.length, 50), { timeout: 10_000 })
    await page.keyboard.press('ArrowUp') // back to Everything
    await page.waitForURL(/\/history$/)
    await page.locator('ol.history > li').nth(49).waitFor()
    await tabTo(page, '#history-more', 400)
    await page.keyboard.press('Enter')
    await page.locator('ol.history > li').nth(50).waitFor()
    assert.equal(await page.locator('ol.history > li').count(), (await allHistory(acc)).length)
    await context.close()
  })

  for (const [size, viewport] of [['1280×800', DESKTOP], ['390×844', PHONE]] as const) {
    it(`axe-core at ${size}: segments with the edit form (errors and a conflict shown) and the project history (filtered, paged); nothing wider than the screen; no inline style; no CSP report`, async () => {
      const { page, context, errors } = await openConsole(rig, acc, viewport)
      const found: string[] = []
      const check = async (name: string) => {
        for (const v of await axeViolations(page)) found.push(`${name}: ${v}`)
        const w = await page.evaluate(() => document.documentElement.scrollWidth)
        assert.ok(w <= viewport.width, `${name}: ${w} px wide`)
        assert.equal(await page.locator('[style]').count(), 0, `${name}: an element has a style attribute`)
      }
      await visit(page, `/projects/${acc.projectId}/segments`, 'Segments')
      await check('segments')
      await page.getByRole('button', { name: 'Edit the segment beta' }).click()
      await editForm(page, 'beta').waitFor()
      await check('segment edit')
      await page.locator(editId('beta', 'conditions[0]') + '-value').fill('')
      await editForm(page, 'beta').getByRole('button', { name: 'Save segment beta' }).click()
      await page.locator(editId('beta', 'conditions[0]') + '-value-error').waitFor()
      await check('segment edit with errors')
      await page.locator(editId('beta', 'conditions[0]') + '-value').fill('beta')
      assert.equal((await apiCall(acc, 'PUT', '/segments/beta', { description: `changed at ${size}` })).status, 200)
      await editForm(page, 'beta').getByRole('button', { name: 'Save segment beta' }).click()
      await page.getByText('Someone else changed this segment').waitFor()
      await check('segment conflict')
      await visit(page, `/projects/${acc.projectId}/history`, 'Project history')
      await page.locator('ol.history > li').first().waitFor()
      await check('project history')
      await page.getByRole('button', { name: 'Older changes' }).click()
      await page.locator('ol.history > li').nth(50).waitFor()
      await check('project history, two pages')
      await visit(page, `/projects/${acc.projectId}/history?kind=segment&type=segment.deleted`, 'Project history')
      await page.locator('ol.history > li').first().waitFor()
      await check('project history filtered')
      await visit(page, `/projects/${acc.projectId}/history?kind=webhook&type=webhook.deleted`, 'Project history')
      await page.getByText('No changes match these filters.').waitFor()
      await check('project history, nothing matches')
      assert.deepEqual(found, [])
      assert.deepEqual(await cspViolations(page), [])
      // The 412 this test asked for is logged by the browser as a failed load: nothing else may be.
      assert.deepEqual(errors.filter((e) => !/status of 412/.test(e)), [])
      await context.close()
    })
  }
})
