// The inspection page follows the live stream (no polling while connected), shows a visible
// "disconnected, reconnecting" state when the connection drops, and after reconnecting shows
// what was captured meanwhile (Debian chromium through a proxy whose connections the test drops).
// Both status texts reach WCAG AA contrast (4.5:1) on the header: the outage message most of all.
import assert from 'node:assert/strict'
import { type Browser, type Page } from 'playwright-core'
import { startSystem, type TestSystem } from './helpers/system.ts'
import { startTcpProxy, type TcpProxy } from './helpers/tcp-proxy.ts'
import { capture, createEndpoint, signup } from './helpers/webhooks.ts'
import { launchChromium } from './helpers/browser.ts'
import { axeViolations, contrastOf } from './helpers/a11y.ts'

describe('webhooks: inspection page live stream (Debian chromium)', function () {
  this.timeout(90_000)
  let sys: TestSystem
  let browser: Browser
  let proxy: TcpProxy
  before(async () => {
    sys = await startSystem({ services: ['webhooks'], workers: false })
    proxy = await startTcpProxy(sys.root.webhooks)
    browser = await launchChromium()
  })
  after(async () => {
    await browser?.close()
    await proxy?.close()
    await sys?.stop()
  })

  const rows = (page: Page) => page.locator('#requests li').count()

  it('receives captures over the stream without polling, shows a drop, reconnects and catches up', async () => {
    const key = await signup(sys)
    const ep = await createEndpoint(sys, key)
    await capture(ep.url, { body: 'before' })
    const page = await browser.newPage()
    const errors: string[] = []
    page.on('pageerror', (e) => errors.push(e.message))
    const apiCalls: string[] = []
    page.on('request', (r) => {
      if (r.url().includes('/api/v1/')) apiCalls.push(new URL(r.url()).pathname + new URL(r.url()).search)
    })
    await page.goto(`${proxy.url}/inspect/${ep.endpoint_id}#key=${key}`)
    await page.waitForFunction(() => document.getElementById('status')?.textContent?.endsWith('· live'))
    assert.equal(await rows(page), 1)
    const before = apiCalls.length
    const streamCall = apiCalls.find((c) => c.endsWith('/stream'))
    assert.ok(streamCall, `the page opened the stream: ${apiCalls.join(' ')}`)
    assert.ok(!apiCalls.some((c) => c.includes('key=')), 'the key is never in a URL')

    await capture(ep.url, { body: 'live 1' })
    await capture(ep.url, { body: 'live 2' })
    await page.waitForFunction(() => document.querySelectorAll('#requests li').length === 3, null, { timeout: 10_000 })
    assert.equal(apiCalls.length, before, `no API call while the stream is up: ${apiCalls.slice(before).join(' ')}`)
    const live = await contrastOf(page, '#status')
    assert.ok(live >= 4.5, `live status contrast ${live.toFixed(2)}:1`)

    await proxy.drop()
    await page.waitForFunction(() => document.getElementById('status')?.textContent?.includes('disconnected, reconnecting'), null, { timeout: 10_000 })
    assert.ok(await page.locator('#status.offline').isVisible())
    const offline = await contrastOf(page, '#status.offline')
    assert.ok(offline >= 4.5, `"disconnected, reconnecting…" contrast ${offline.toFixed(2)}:1`)
    assert.deepEqual(await axeViolations(page), [])
    await capture(ep.url, { body: 'while down' })
    await proxy.restore()
    await page.waitForFunction(() => document.getElementById('status')?.textContent?.endsWith('· live'), null, { timeout: 20_000 })
    await page.waitForFunction(() => document.querySelectorAll('#requests li').length === 4, null, { timeout: 10_000 })
    await capture(ep.url, { body: 'after' })
    await page.waitForFunction(() => document.querySelectorAll('#requests li').length === 5, null, { timeout: 10_000 })
    const ids = await page.locator('#requests li').evaluateAll((lis) => lis.map((li) => Number((li as HTMLElement).dataset.id)))
    assert.deepEqual(ids, [5, 4, 3, 2, 1])

    // The filter box: hides what does not match at once; Enter also searches older captures.
    await page.fill('#filter', 'while down')
    await page.waitForFunction(() => [...document.querySelectorAll('#requests li')].filter((li) => !(li as HTMLElement).hidden).length === 1)
    assert.equal(await page.locator('#requests li:not([hidden])').getAttribute('data-id'), '4')
    await page.fill('#filter', '')
    await page.waitForFunction(() => [...document.querySelectorAll('#requests li')].every((li) => !(li as HTMLElement).hidden))
    assert.deepEqual(errors, [])
    await page.close()
  })
})
