// The inspection page on a phone (390 px wide, as an iPhone 12–15): the detail
// pane takes the width, header values wrap instead of being cut, nothing scrolls sideways, rows
// show the sub-path only, the actions fit, and axe-core finds no serious or critical violation.
// A screenshot is written to $SCREENSHOT_DIR (default: the OS temp dir) for a human to look at.
import assert from 'node:assert/strict'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Browser } from 'playwright-core'
import { startSystem, type TestSystem } from './helpers/system.ts'
import { capture, createEndpoint, signup } from './helpers/webhooks.ts'
import { launchChromium } from './helpers/browser.ts'
import { axeViolations, contrastOf } from './helpers/a11y.ts'

const LONG_VALUE = 't=1732350000,v1=' + 'a1b2c3d4e5f6'.repeat(12) + ',v0=' + 'f'.repeat(64)

describe('webhooks: inspection page on a 390 px phone screen (Debian chromium)', function () {
  this.timeout(90_000)
  let sys: TestSystem
  let browser: Browser
  before(async () => {
    sys = await startSystem({ services: ['webhooks'], workers: false })
    browser = await launchChromium()
  })
  after(async () => {
    await browser?.close()
    await sys?.stop()
  })

  it('the detail pane is full width, a long header value wraps inside the screen, nothing overflows sideways', async () => {
    const key = await signup(sys)
    const ep = await createEndpoint(sys, key, { name: 'stripe on my phone' })
    for (let i = 0; i < 3; i++) await capture(`${ep.url}/older/${i}`, { body: '{}', headers: { 'content-type': 'application/json' } })
    await capture(`${ep.url}/stripe/events?attempt=1`, {
      body: JSON.stringify({ id: 'evt_1', type: 'invoice.paid', data: { object: { id: 'in_1', amount_paid: 1999, lines: ['a'.repeat(120)] } } }),
      headers: { 'content-type': 'application/json', 'stripe-signature': LONG_VALUE, 'x-a-rather-long-header-name-from-a-sender': 'short' },
    })
    const context = await browser.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true })
    const page = await context.newPage()
    await page.goto(`${ep.inspect_url}#key=${key}`)
    await page.waitForSelector('#requests li')
    await page.locator('#requests li').first().tap()
    await page.waitForSelector('#detail table.headers')

    const facts = await page.evaluate(() => {
      const detail = document.getElementById('detail')!.getBoundingClientRect()
      const cell = [...document.querySelectorAll('#detail table.headers td')].find((td) => td.textContent!.startsWith('t=1732350000'))! as HTMLElement
      const r = cell.getBoundingClientRect()
      const line = parseFloat(getComputedStyle(cell).lineHeight)
      return {
        viewport: document.documentElement.clientWidth,
        pageScrollWidth: document.documentElement.scrollWidth,
        detailWidth: detail.width,
        detailLeft: detail.left,
        cellLeft: r.left,
        cellRight: r.right,
        cellHeight: r.height,
        line,
        cellClipped: cell.scrollWidth > cell.clientWidth,
        detailScrollsSideways: document.getElementById('detail')!.scrollWidth > document.getElementById('detail')!.clientWidth,
      }
    })
    await page.screenshot({ path: join(process.env.SCREENSHOT_DIR ?? tmpdir(), 'inspect-390.png'), fullPage: true })
    assert.equal(facts.viewport, 390)
    assert.ok(facts.detailWidth >= 370, `detail pane ${facts.detailWidth} px wide`)
    assert.ok(facts.pageScrollWidth <= facts.viewport, `page scrolls sideways (${facts.pageScrollWidth} px)`)
    assert.ok(!facts.detailScrollsSideways, 'detail pane scrolls sideways')
    // The whole value is on screen: inside the viewport, not clipped, over several lines.
    assert.ok(facts.cellLeft >= 0 && facts.cellRight <= facts.viewport, `value cell spans ${facts.cellLeft}–${facts.cellRight}`)
    assert.ok(!facts.cellClipped, 'value cell clips its text')
    assert.ok(facts.cellHeight >= 3 * facts.line, `value is ${facts.cellHeight} px high (line ${facts.line} px): not wrapped`)
    // The value cell is not squeezed beside its name: it has most of the width to itself.
    assert.ok(facts.cellRight - facts.cellLeft >= 300, `value cell only ${facts.cellRight - facts.cellLeft} px wide`)
    // Selecting a request brings its details on screen.
    assert.ok(await page.locator('#detail h2').isVisible())
    const h2 = await page.locator('#detail h2').boundingBox()
    // Scrolled to the top of the screen; Chromium may leave it a fraction of a pixel above 0.
    assert.ok(h2 && h2.y >= -1 && h2.y < 844, `details heading at y=${h2?.y}`)

    // Rows show the path below the endpoint, so the 22-character token does not wrap every row.
    assert.deepEqual((await page.locator('#requests li .path').allTextContents()).slice(0, 2), ['/stripe/events?attempt=1', '/older/2'])
    assert.ok(!(await page.locator('#requests').textContent())!.includes(ep.endpoint_id))
    const rightmost = await page.evaluate(() => Math.max(...[...document.querySelectorAll('#detail .actions *, #capture-bar *')].map((e) => e.getBoundingClientRect().right)))
    assert.ok(rightmost <= 390, `an action or the capture URL reaches x=${rightmost}`)
    // Replay on the free plan: the API's message, shown as a readable error.
    await page.getByLabel('Replay to').fill('http://127.0.0.1:9/x')
    await page.getByRole('button', { name: 'Replay', exact: true }).tap()
    await page.waitForFunction(() => /^Replay failed: Replay is not available on the free plan/.test(document.querySelector('#detail .action-result')!.textContent!))
    const c = await contrastOf(page, '#detail .action-result')
    assert.ok(c >= 4.5, `error text contrast ${c.toFixed(2)}:1`)
    assert.deepEqual(await axeViolations(page), [])
    await context.close()
  })
})
