// No page the services serve makes a request off the host. Chromium loads every
// HTML page (the inspection page, /docs on each service, the /admin/queues dashboard with its
// token, the Stripe simulator's checkout page and the billing return pages) and every request it
// makes is checked: only 127.0.0.1/localhost (and data:/blob:) may be asked for anything.
import assert from 'node:assert/strict'
import { type Browser, type BrowserContext, type Page } from 'playwright-core'
import { SERVICES } from '../src/services.ts'
import { ADMIN_CSP } from '../src/platform/ops/bull-board.ts'
import { QueueName } from './helpers/queue-names.ts'
import { startSystem, type TestSystem } from './helpers/system.ts'
import { get } from './helpers/http.ts'
import { checkout } from './helpers/billing.ts'
import { capture, createEndpoint, signup } from './helpers/webhooks.ts'
import { launchChromium } from './helpers/browser.ts'

const TOKEN = 'offhost-admin-token-0123456789'
const LOCAL = new Set(['127.0.0.1', 'localhost', '[::1]'])

describe('ops: no page makes a request off the host (Debian chromium)', function () {
  this.timeout(120_000)
  let sys: TestSystem
  let browser: Browser
  let context: BrowserContext
  /** Every URL any page asked for, and those that left the host. */
  const requested: string[] = []
  const offHost: string[] = []
  const problems: string[] = []

  before(async () => {
    sys = await startSystem({ workers: false, env: { ADMIN_TOKEN: TOKEN } })
    browser = await launchChromium()
    context = await browser.newContext({ httpCredentials: { username: 'ops', password: TOKEN } })
    context.on('request', (req) => {
      const url = new URL(req.url())
      requested.push(req.url())
      if (url.protocol !== 'data:' && url.protocol !== 'blob:' && !LOCAL.has(url.hostname)) offHost.push(req.url())
    })
    // Off-host requests are recorded above, then refused here, so the test never waits on a network.
    await context.route(
      (url) => !LOCAL.has(url.hostname) && url.protocol !== 'data:' && url.protocol !== 'blob:',
      (route) => route.abort('blockedbyclient'),
    )
  })
  after(async () => {
    await context?.close()
    await browser?.close()
    await sys?.stop()
  })

  beforeEach(() => {
    offHost.length = 0
    problems.length = 0
  })

  /** Nothing left the host, and no page logged an error (a resource a CSP refused would). */
  function clean() {
    assert.deepEqual(offHost, [])
    assert.deepEqual(problems, [])
  }

  /** `idle: false` for pages that hold a connection open for good (the inspection page's live stream never lets the network go idle). */
  async function open(url: string, ready: (page: Page) => Promise<unknown>, { idle = true } = {}): Promise<Page> {
    const page = await context.newPage()
    page.on('pageerror', (e) => problems.push(`${url}: ${e.message}`))
    page.on('console', (m) => m.type() === 'error' && problems.push(`${url}: ${m.text()}`))
    const res = await page.goto(url)
    assert.ok(res && res.status() < 400, `${url} → ${res?.status()}`)
    await ready(page)
    if (idle) await page.waitForLoadState('networkidle')
    return page
  }

  it('the webhook inspection page, with a capture selected', async () => {
    const key = await signup(sys)
    const ep = await createEndpoint(sys, key)
    await capture(ep.url, { body: '{"a":1}', headers: { 'content-type': 'application/json' } })
    const page = await open(
      `${ep.inspect_url}#key=${key}`,
      (p) => p.waitForFunction(() => document.querySelector('#requests li') && document.getElementById('status')?.textContent?.endsWith('· live')),
      { idle: false },
    )
    await page.locator('#requests li').first().click()
    await page.waitForSelector('#detail pre.raw')
    await page.close()
    clean()
  })

  for (const svc of SERVICES.map((s) => s.name)) {
    it(`${svc}: /docs (Swagger UI) renders every operation`, async () => {
      const doc = (await get(`${sys.root[svc]}/openapi.json`)).json
      const operations = Object.values<Record<string, unknown>>(doc.paths).reduce((n, ops) => n + Object.keys(ops).length, 0)
      const page = await open(`${sys.root[svc]}/docs`, (p) => p.waitForSelector('.opblock', { timeout: 60_000 }))
      assert.equal(await page.locator('.opblock').count(), operations)
      await page.close()
      clean()
    })
  }

  it('/admin/queues (Bull Board, with ADMIN_TOKEN) renders its queues in IBM Plex served from this host', async () => {
    const base = sys.root.webhooks
    const page = await open(`${base}/admin/queues`, (p) => p.getByText(QueueName.CaptureForward).first().waitFor({ timeout: 60_000 }))
    const res = await get(`${base}/admin/queues`, { headers: { authorization: `Bearer ${TOKEN}` } })
    assert.equal(res.headers.get('content-security-policy'), ADMIN_CSP)
    assert.ok(!res.text.includes('googleapis'), 'the Google Fonts link is gone')
    // The dashboard's own fonts still load, from here.
    const fonts = requested.filter((u) => u.startsWith(`${base}/admin/queues/fonts/`))
    assert.ok(fonts.some((u) => u.endsWith('/fonts.css')), 'fonts.css requested')
    assert.ok(fonts.some((u) => /ibm-plex-sans\/ibm-plex-sans-latin-\d00-normal\.woff2$/.test(u)), `a Plex woff2 requested: ${fonts.join(', ')}`)
    assert.ok(await page.evaluate(() => document.fonts.check('16px "IBM Plex Sans"')), 'IBM Plex Sans is available to the page')
    await page.close()
    clean()
  })

  it('the dashboard fonts need the token, and unknown font paths are 404', async () => {
    const base = `${sys.root.flags}/admin/queues/fonts`
    assert.equal((await get(`${base}/fonts.css`)).status, 401)
    const auth = { headers: { authorization: `Bearer ${TOKEN}` } }
    const css = await get(`${base}/fonts.css`, auth)
    assert.equal(css.status, 200)
    assert.match(css.headers.get('content-type')!, /text\/css/)
    assert.ok(!/https?:/.test(css.text))
    const woff = await get(`${base}/ibm-plex-mono/ibm-plex-mono-latin-400-normal.woff2`, auth)
    assert.equal(woff.status, 200)
    assert.equal(woff.headers.get('content-type'), 'font/woff2')
    for (const bad of ['ibm-plex-mono/..%2F..%2Fpackage.json', 'other/x.woff2', 'ibm-plex-mono/nope.woff2', 'ibm-plex-mono/LICENSE']) {
      const r = await get(`${base}/${bad}`, auth)
      assert.equal(r.status, 404, bad)
    }
  })

  it('the Stripe simulator checkout page, paying, and the success and cancel return pages', async () => {
    const key = await signup(sys)
    const res = await checkout(sys, 'webhooks', key, 'pro')
    assert.equal(res.status, 200, res.text)
    const page = await open(res.json.checkout_url, (p) => p.waitForSelector('#pay'))
    await Promise.all([page.waitForURL(/\/billing\/success/), page.click('#pay')])
    await page.waitForLoadState('networkidle')
    await page.close()
    await (await open(`${sys.root.invoice}/api/v1/billing/cancel`, (p) => p.waitForSelector('h1'))).close()
    clean()
  })
})
