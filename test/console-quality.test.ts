// Quality bars of the flags console, in Chromium: axe-core finds no serious or critical problem on
// any screen (dialogs open included) at 1280×800 and 390×844, and no screen scrolls sideways on the
// phone; the main flow works with the keyboard alone and the focused element always shows a
// visible focus ring; text contrast is AA; every answer carries the strict CSP, the page never
// trips it and holds no inline style or script; the bundle is at most 150 KB gzipped.
import assert from 'node:assert/strict'
import { gzipSync } from 'node:zlib'
import type { Page } from 'playwright-core'
import { axeViolations, contrastOf } from './helpers/a11y.ts'
import { apiCall, consoleAccount, cspViolations, DESKTOP, openConsole, PHONE, shot, startConsole, visit, type ConsoleRig, tabToSelector } from './helpers/console.ts'
import type { FlagsAccount } from './helpers/flags.ts'

const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

describe('flags console: accessibility, keyboard, CSP and size (Chromium)', function () {
  this.timeout(90_000)
  let rig: ConsoleRig
  let acc: FlagsAccount
  before(async () => {
    rig = await startConsole()
    acc = await consoleAccount(rig)
    const made = [await apiCall(acc, 'POST', '/segments', { name: 'staff', conditions: [{ attribute: 'email', operator: 'ends_with', value: '@example.com' }] })]
    made.push(await apiCall(acc, 'POST', '/environments', { name: 'staging' }))
    made.push(await apiCall(acc, 'POST', '/flags', {
      key: 'new-checkout', type: 'boolean', enabled: true, default_value: false, tags: ['checkout'],
      rules: [
        { conditions: [{ attribute: 'country', operator: 'in', value: ['DE', 'AT'] }], segments: ['staff'], value: true },
        { conditions: [{ attribute: 'user_id', operator: 'percent', value: 30 }], variants: [{ name: 'a', weight: 50, value: true }, { name: 'b', weight: 50, value: false }], stickiness: 'account_id' },
      ],
    }))
    made.push(await apiCall(acc, 'PUT', '/flags/new-checkout', { default_value: true }))
    made.push(await apiCall(acc, 'POST', '/webhooks', { url: 'http://127.0.0.1:9/hook' }))
    assert.deepEqual(made.map((r) => r.status), [201, 201, 201, 200, 201], JSON.stringify(made.map((r) => r.json)))
  })
  after(async () => {
    await rig?.stop()
  })

  /** Every screen, with what to do there before checking (open a dialog, run the playground). */
  const screens = (p: string): Array<[string, string, RegExp, ((page: Page) => Promise<void>)?]> => [
    ['projects', '/projects', /^Projects$/],
    ['project delete dialog', '/projects', /^Projects$/, async (page) => page.getByRole('button', { name: 'Delete Default' }).click()],
    ['flags list', `/projects/${p}`, /^Flags$/, async (page) => page.getByText('1 of 1 flag').waitFor()],
    ['new flag dialog', `/projects/${p}`, /^Flags$/, async (page) => page.getByRole('button', { name: 'New flag' }).click()],
    ['flag page', `/projects/${p}/flags/new-checkout`, /^new-checkout$/],
    ['flag page with errors', `/projects/${p}/flags/new-checkout`, /^new-checkout$/, async (page) => {
      await page.locator('#f-rules_0__conditions_0_-value').fill('')
      await page.getByRole('button', { name: 'Save production' }).click()
      await page.locator('#f-rules_0__conditions_0_-value-error').waitFor()
    }],
    ['history', `/projects/${p}/flags/new-checkout/history`, /history$/, async (page) => page.locator('ol.history > li').nth(1).waitFor()],
    ['usage', `/projects/${p}/flags/new-checkout/usage`, /usage$/],
    ['playground', `/projects/${p}/playground`, /^Playground$/, async (page) => {
      await page.getByRole('button', { name: /Evaluate in/ }).click()
      await page.locator('.result-env').first().waitFor()
    }],
    ['segments', `/projects/${p}/segments`, /^Segments$/],
    ['environments', `/projects/${p}/environments`, /^Environments and keys$/],
    ['webhooks', `/projects/${p}/webhooks`, /^Change webhooks$/, async (page) => {
      await page.locator('summary', { hasText: 'Deliveries' }).click()
      await page.getByText(/No deliveries yet|Last \d+ deliveries/).waitFor()
    }],
  ]

  for (const [size, viewport] of [['1280×800', DESKTOP], ['390×844', PHONE]] as const) {
    it(`axe-core: no serious or critical violation on any screen at ${size}; nothing scrolls sideways; no inline style; no CSP report`, async () => {
      const signedOut = await openConsole(rig, null, viewport)
      await visit(signedOut.page, '/sign-in', 'Sign in')
      const found: string[] = (await axeViolations(signedOut.page)).map((v) => `sign-in: ${v}`)
      await signedOut.context.close()
      const { page, context, errors } = await openConsole(rig, acc, viewport)
      const wide: string[] = []
      for (const [name, url, heading, act] of screens(acc.projectId)) {
        await visit(page, url, heading)
        await act?.(page)
        for (const v of await axeViolations(page)) found.push(`${name}: ${v}`)
        const w = await page.evaluate(() => document.documentElement.scrollWidth)
        if (w > viewport.width) wide.push(`${name}: ${w} px`)
        assert.equal(await page.locator('[style]').count(), 0, `${name}: an element has a style attribute`)
        if (viewport === PHONE && (name === 'flags list' || name === 'flag page')) await shot(page, `${name.replace(' ', '-')}-phone`)
      }
      assert.deepEqual(found, [])
      assert.deepEqual(wide, [], 'screens wider than the viewport')
      assert.deepEqual(await cspViolations(page), [])
      assert.deepEqual(errors, [])
      await context.close()
    })
  }

  it('contrast: body text, hints, muted text, links, tabs, pills and buttons are at least 4.5:1', async () => {
    const { page, context } = await openConsole(rig, acc)
    await visit(page, `/projects/${acc.projectId}/flags/new-checkout`, 'new-checkout')
    for (const sel of ['p.muted', '.tabs a[aria-current=page]', '.tabs li:nth-child(2) a', 'p.hint', 'legend', 'button.primary', 'button.danger', '.brand', '.crumbs a']) {
      const ratio = await contrastOf(page, `${sel} >> nth=0`)
      assert.ok(ratio >= 4.5, `${sel}: ${ratio.toFixed(2)}:1`)
    }
    await visit(page, `/projects/${acc.projectId}`, 'Flags')
    for (const sel of ['.pill.on', '.pill.off', '.pill.tag', 'a.flag-key', 'thead th']) {
      const ratio = await contrastOf(page, `${sel} >> nth=0`)
      assert.ok(ratio >= 4.5, `${sel}: ${ratio.toFixed(2)}:1`)
    }
    await context.close()
  })

  const tabTo = (page: Page, target: string) => tabToSelector(page, target, { max: 80 })

  it('keyboard only: sign in, open the project, create a flag, add a rule, save, turn it on; focus always visible', async () => {
    const { page, context } = await openConsole(rig, null)
    await visit(page, '/sign-in', 'Sign in')
    await tabTo(page, '#api-key')
    await page.keyboard.type(acc.apiKey)
    await page.keyboard.press('Enter')
    await page.getByRole('heading', { level: 1, name: 'Projects' }).waitFor()
    await tabTo(page, `a[href="/projects/${acc.projectId}"]`)
    await page.keyboard.press('Enter')
    await page.getByRole('heading', { level: 1, name: 'Flags' }).waitFor()
    // Focus moved to the new screen's heading.
    await page.waitForFunction(() => document.activeElement?.id === 'page-title', null, { timeout: 5_000 })
    await tabTo(page, 'button.primary')
    await page.keyboard.press('Enter')
    // The dialog takes focus on its first field.
    await page.getByRole('dialog', { name: 'New flag' }).waitFor()
    await page.waitForFunction(() => document.activeElement?.id === 'new-key', null, { timeout: 5_000 })
    await page.keyboard.type('keyboard-flag')
    await page.keyboard.press('Enter')
    await page.getByRole('heading', { level: 1, name: 'keyboard-flag' }).waitFor()
    await tabTo(page, 'button.add-rule')
    await page.keyboard.press('Enter')
    await tabTo(page, '#f-rules_0__conditions_0_-value')
    await page.keyboard.type('u-1')
    await tabTo(page, 'button[type=submit]')
    await page.keyboard.press('Enter')
    await page.getByText('Saved keyboard-flag in production').waitFor()
    await page.keyboard.press('Shift+Tab')
    await tabTo(page, '#enabled-production')
    await page.keyboard.press('Space')
    await page.getByText('keyboard-flag is on in production').waitFor()
    const f = (await apiCall(acc, 'GET', '/flags/keyboard-flag')).json
    assert.equal(f.enabled, true)
    assert.deepEqual(f.rules, [{ conditions: [{ attribute: 'user_id', operator: 'in', value: ['u-1'] }], value: true }])
    await context.close()
  })

  it('strict CSP on the page and its assets; the bundle is at most 150 KB gzipped', async () => {
    const html = await fetch(`${rig.root}/projects/${acc.projectId}/flags/x`)
    assert.equal(html.status, 200)
    assert.equal(html.headers.get('content-security-policy'), CSP)
    const body = await html.text()
    assert.doesNotMatch(body, /<script(?![^>]*\bsrc=)[^>]*>/, 'an inline script')
    assert.doesNotMatch(body, /<style|style=/, 'an inline style')
    const assets = [...body.matchAll(/(?:src|href)="(\/console\/assets\/[^"]+)"/g)].map((m) => m[1]!)
    const js = assets.filter((a) => a.endsWith('.js'))
    assert.equal(js.length, 1)
    let gz = 0
    for (const a of assets) {
      const r = await fetch(`${rig.root}${a}`)
      assert.equal(r.status, 200)
      assert.equal(r.headers.get('content-security-policy'), CSP)
      if (a.endsWith('.js')) gz += gzipSync(Buffer.from(await r.arrayBuffer()), { level: 9 }).length
    }
    assert.ok(gz > 5_000 && gz <= 150 * 1024, `console JavaScript is ${gz} bytes gzipped`)
  })
})
