import assert from 'node:assert/strict'
import type { Browser } from 'playwright-core'
import { startSystem, type TestSystem } from './helpers/system.ts'
import { get } from './helpers/http.ts'
import { capture, createEndpoint, signup } from './helpers/webhooks.ts'
import { inspectCsp } from '../src/webhooks/inspect-routes.ts'
import { launchChromium } from './helpers/browser.ts'

describe('webhooks: inspection page (Debian chromium)', function () {
  this.timeout(90_000)
  let sys: TestSystem
  let browser: Browser
  let key: string
  let ep: any
  before(async () => {
    sys = await startSystem({ services: ['webhooks'], workers: false })
    key = await signup(sys)
    ep = await createEndpoint(sys, key, { name: '<b>my</b> endpoint' })
    browser = await launchChromium()
  })
  after(async () => {
    await browser?.close()
    await sys?.stop()
  })

  it('serves the page with a strict CSP, escaped, and its script as a separate file; unknown token → 404', async () => {
    const r = await get(ep.inspect_url)
    assert.equal(r.status, 200)
    const csp = r.headers.get('content-security-policy')!
    const nonce = /script-src 'nonce-([A-Za-z0-9+/=]{24})';/.exec(csp)?.[1]
    assert.ok(nonce, csp)
    assert.equal(csp, inspectCsp(nonce))
    // The body formatters first (deferred scripts run in order), then the page script.
    assert.ok(r.text.includes(`<script src="/static/inspect-format.js" nonce="${nonce}" defer></script>\n<script src="/static/inspect.js" nonce="${nonce}" defer></script>`))
    // A fresh nonce per response.
    assert.notEqual((await get(ep.inspect_url)).headers.get('content-security-policy'), csp)
    assert.ok(!/<script>/.test(r.text), 'no inline script')
    assert.ok(r.text.includes('&#60;b&#62;my&#60;/b&#62; endpoint'))
    assert.ok(!r.text.includes(key))
    const js = await get(`${sys.url.webhooks}/static/inspect.js`)
    assert.equal(js.status, 200)
    assert.match(js.headers.get('content-type')!, /javascript/)
    const format = await get(`${sys.url.webhooks}/static/inspect-format.js`)
    assert.equal(format.status, 200)
    assert.match(format.headers.get('content-type')!, /javascript/)
    assert.equal(format.headers.get('content-security-policy'), "default-src 'none'; frame-ancestors 'none'")
    assert.equal((await get(`${sys.url.webhooks}/inspect/${'x'.repeat(22)}`)).status, 404)
    assert.equal((await get(`${sys.url.webhooks}/static/nope.js`)).status, 404)
    // The icon browsers ask every page of the origin for.
    const icon = await get(`${sys.url.webhooks}/favicon.ico`)
    assert.equal(icon.status, 200)
    assert.equal(icon.headers.get('content-type'), 'image/x-icon')
    assert.ok(r.text.includes('<link rel="icon" href="/favicon.ico">'))
    // The capture URL, escaped text on the page (the copy button is tested in webhooks-page-actions).
    assert.ok(r.text.includes(`<code id="capture-url" aria-labelledby="capture-label">${ep.url}</code>`))
  })

  it('shows captures live, pretty-prints JSON, offers copy-as-cURL, and never runs captured content', async () => {
    await capture(`${ep.url}/first?x=1`, { body: '{"event":"push","n":[1,2]}', headers: { 'content-type': 'application/json' } })
    const page = await browser.newPage()
    const errors: string[] = []
    page.on('pageerror', (e) => errors.push(e.message))
    await page.goto(`${ep.inspect_url}#key=${key}`)
    await page.waitForSelector('#requests li')
    assert.equal(await page.locator('#requests li').count(), 1)
    assert.ok(!page.url().includes(key), 'the key is removed from the address bar')

    const hostile = '<script>window.__pwned=1</script><img src=x onerror="window.__pwned=2"><svg onload="window.__pwned=3">'
    await capture(ep.url, { body: hostile, headers: { 'content-type': 'text/html', 'x-evil': '<img src=x onerror="window.__pwned=4">' } })
    // Appears without a reload.
    await page.waitForFunction(() => document.querySelectorAll('#requests li').length === 2, null, { timeout: 15_000 })
    await page.locator('#requests li').first().click()
    await page.waitForSelector('#detail pre.raw')
    assert.equal(await page.locator('#detail pre.raw').textContent(), hostile)
    assert.equal(await page.evaluate(() => (window as any).__pwned), undefined)
    assert.equal(await page.evaluate(() => document.querySelectorAll('img, svg, #detail script').length), 0)
    assert.ok((await page.locator('#detail table.headers').textContent())!.includes('<img src=x onerror="window.__pwned=4">'))

    await page.locator('#requests li').nth(1).click()
    await page.waitForFunction(() => document.querySelector('#detail h2')?.textContent?.includes('/first'))
    const pretty = await page.locator('#detail pre.pretty').textContent()
    assert.equal(pretty, JSON.stringify({ event: 'push', n: [1, 2] }, null, 2))
    const curl = await page.locator('#detail pre.curl').textContent()
    assert.match(curl!, /^curl -X POST 'http:\/\/127\.0\.0\.1:\d+\/hook\/\w+\/first\?x=1' .*-H 'content-type: application\/json'.* --data-binary '\{"event":"push","n":\[1,2\]\}'$/)
    assert.deepEqual(errors, [])
    await page.close()
  })

  it('asks for the API key when none is given, and refuses a wrong one', async () => {
    const page = await browser.newPage()
    await page.goto(ep.inspect_url)
    await page.waitForSelector('#key-form:not([hidden])')
    await page.fill('#key-input', 'wv_wrong')
    await page.click('#key-form button')
    await page.waitForFunction(() => /not accepted/.test(document.getElementById('status')!.textContent!))
    assert.equal(await page.locator('#requests li').count(), 0)
    await page.fill('#key-input', key)
    await page.click('#key-form button')
    await page.waitForSelector('#requests li')
    await page.close()
  })
})
