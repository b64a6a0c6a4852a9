// The three consoles on one host (each service on its own port, as `npm start` runs them): a
// browser shares cookies across the ports of a host, so each console keeps a session cookie of its
// own. Signing in to one, or out of one, leaves the others as they were.
import assert from 'node:assert/strict'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { launchChromium } from './helpers/browser.ts'
import { signup } from './helpers/billing.ts'
import { startSystem, type TestSystem } from './helpers/system.ts'
import type { Service } from '../src/platform/plans.ts'

/** A deep link of each console and the heading of its screen. */
const SCREENS: Record<Service, { path: string; heading: string }> = {
  flags: { path: '/projects', heading: 'Projects' },
  invoice: { path: '/invoices', heading: 'Invoices' },
  webhooks: { path: '/endpoints', heading: 'Endpoints' },
}
const SERVICES = Object.keys(SCREENS) as Service[]

describe('consoles on one host: a session cookie per service (Chromium)', function () {
  this.timeout(120_000)
  let sys: TestSystem
  let browser: Browser
  let context: BrowserContext
  let page: Page
  const keys = {} as Record<Service, string>

  before(async () => {
    sys = await startSystem({ services: SERVICES, workers: false, env: { TRUST_PROXY: 'true' } })
    for (const s of SERVICES) {
      // The first request builds the bundle (when its sources changed): done here, not in a test.
      const r = await fetch(`${sys.root[s]}/`)
      assert.equal(r.status, 200, `${s} console page`)
      keys[s] = (await signup(sys, s)).key
    }
    for (const s of SERVICES) assert.equal(new URL(sys.root[s]!).hostname, '127.0.0.1', 'one host, one port per service')
    browser = await launchChromium()
    context = await browser.newContext({ viewport: { width: 1280, height: 800 } })
    page = await context.newPage()
  })
  after(async () => {
    await browser?.close()
    await sys?.stop()
  })

  const screen = async (s: Service) => {
    await page.goto(`${sys.root[s]}${SCREENS[s].path}`)
    await page.getByRole('heading', { level: 1, name: new RegExp(`^(${SCREENS[s].heading}|Sign in)$`) }).waitFor()
    return (await page.getByRole('heading', { level: 1 }).first().textContent())?.trim()
  }

  it('signing in to each console in turn keeps the others signed in; signing out of one leaves the others', async () => {
    for (const s of SERVICES) {
      assert.equal(await screen(s), 'Sign in', `${s} asks for a key first`)
      await page.getByLabel('API key', { exact: true }).fill(keys[s])
      await page.getByRole('button', { name: 'Sign in' }).click()
      await page.getByRole('heading', { level: 1, name: SCREENS[s].heading }).waitFor()
    }
    for (const s of SERVICES) assert.equal(await screen(s), SCREENS[s].heading, `${s} still signed in after the others signed in`)
    const names = (await context.cookies()).map((c) => c.name).sort()
    assert.deepEqual(names, ['qw_console_flags', 'qw_console_invoice', 'qw_console_webhooks'])

    await page.goto(`${sys.root.webhooks}${SCREENS.webhooks.path}`)
    await page.getByRole('button', { name: 'Sign out' }).click()
    await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor()
    assert.equal(await screen('webhooks'), 'Sign in')
    assert.equal(await screen('flags'), SCREENS.flags.heading, 'flags still signed in after signing out of webhooks')
    assert.equal(await screen('invoice'), SCREENS.invoice.heading, 'invoice still signed in after signing out of webhooks')
  })

  it("a session id moved into another service's cookie is not a session there, and does not end the session it belongs to", async () => {
    const flags = (await context.cookies()).find((c) => c.name === 'qw_console_flags')!
    const r = await fetch(`${sys.root.invoice}/api/v1/console/session`, { headers: { cookie: `qw_console_invoice=${flags.value}` } })
    assert.equal(r.status, 401)
    assert.deepEqual(await r.json(), { error: 'Not signed in' })
    assert.equal(await screen('flags'), SCREENS.flags.heading)
  })
})
