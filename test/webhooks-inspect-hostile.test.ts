// Hostile captures opened on the inspection page (Debian chromium): anyone who knows a capture URL
// chooses what the page formats. An XML of 95 KB with one 50 KB entity used 15,000 times, a form
// of 100,000 fields, deep nesting and a 20 MiB body each open with little main-thread time (the
// DTD is never parsed; formatting, tables and the raw body are bounded, with "Format anyway" and
// "Show all of it"), and nothing in a capture runs or loads. Main-thread time is read from the
// DevTools Performance domain (TaskDuration) and a long-task observer; the bounds are generous
// (seconds, where the fixed page needs a fraction of one and the unbounded one took 6–46 s), so a
// busy machine does not fail them.
import assert from 'node:assert/strict'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { startSystem, type TestSystem } from './helpers/system.ts'
import { get } from './helpers/http.ts'
import { api, capture, createEndpoint, signup } from './helpers/webhooks.ts'
import { launchChromium } from './helpers/browser.ts'
import { axeViolations } from './helpers/a11y.ts'

/** Main-thread time one capture may cost to open, and the longest single task in it. */
const MAX_TASK_SECONDS = 3
const MAX_LONG_TASK_MS = 1500

const ENTITY = 'x'.repeat(50_000)
const XML_DTD = `<?xml version="1.0"?><!DOCTYPE r [<!ENTITY e "${ENTITY}">]><r>${'&e;'.repeat(15_000)}</r>`
const XML_PLAIN = `<?xml version="1.0"?><r>${'<a>x</a>'.repeat(11_900)}</r>`
/** 100,000 fields in under 1 MiB (the list API carries bodies up to 1 MiB inline). */
const FORM = Array.from({ length: 100_000 }, (_, i) => `f${i}=${i % 10}`).join('&')
const JSON_DEEP = '['.repeat(3_000) + ']'.repeat(3_000)
const XML_DEEP = '<a>'.repeat(10_000) + '</a>'.repeat(10_000)
const TEXT_20M = 'lorem ipsum\n'.repeat(1_800_000)

describe('webhooks: hostile captures on the inspection page stay cheap to open (Debian chromium)', function () {
  this.timeout(180_000)
  let sys: TestSystem
  let browser: Browser
  let context: BrowserContext
  let key: string
  let ep: any
  /** A second endpoint of the same account: anything a capture made the page fetch lands here. */
  let trap: any
  let page: Page
  const errors: string[] = []

  before(async () => {
    assert.ok(Buffer.byteLength(FORM) < 1024 * 1024 && XML_DTD.length > 95_000 && XML_DTD.length < 96_000)
    sys = await startSystem({ services: ['webhooks'], workers: false })
    key = await signup(sys, 'business')
    ep = await createEndpoint(sys, key, { name: 'hostile' })
    trap = await createEndpoint(sys, key, { name: 'trap' })
    const sends: Array<[string, string, string]> = [
      ['/xml-dtd', XML_DTD, 'application/xml'],
      ['/xml-plain', XML_PLAIN, 'application/xml'],
      ['/form-100k', FORM, 'application/x-www-form-urlencoded'],
      ['/json-deep', JSON_DEEP, 'application/json'],
      ['/xml-deep', XML_DEEP, 'text/xml'],
      ['/text-20m', TEXT_20M, 'text/plain'],
    ]
    for (const [path, body, type] of sends) assert.equal((await capture(`${ep.url}${path}`, { body, headers: { 'content-type': type } })).status, 200)
    browser = await launchChromium()
    context = await browser.newContext({ viewport: { width: 1280, height: 800 } })
    // Long tasks of the page, collected from its start (over the DevTools protocol: the page's CSP
    // does not govern it).
    await context.addInitScript(() => {
      const w = window as any
      w.__longTasks = []
      new PerformanceObserver((list) => {
        for (const e of list.getEntries()) w.__longTasks.push(e.duration)
      }).observe({ type: 'longtask', buffered: true })
    })
  })
  after(async () => {
    await browser?.close()
    await sys?.stop()
  })
  // A fresh page per test: tearing down what an earlier test laid out (100,000 table rows) is not
  // charged to the next capture opened.
  beforeEach(async () => {
    page = await context.newPage()
    page.on('pageerror', (e) => errors.push(e.message))
    await page.goto(`${ep.inspect_url}#key=${key}`)
    await page.waitForFunction(() => document.getElementById('status')?.textContent?.endsWith('· live'))
  })
  afterEach(async () => {
    await page?.close()
    assert.deepEqual(errors.splice(0), [])
  })

  /** Opens the capture whose sub-path is `path` and measures the main-thread time it cost, until
   * the page has rendered it and answers again. */
  async function open(path: string): Promise<{ taskSeconds: number; longestTaskMs: number }> {
    const cdp = await context.newCDPSession(page)
    await cdp.send('Performance.enable')
    const taskTime = async () => (await cdp.send('Performance.getMetrics')).metrics.find((m) => m.name === 'TaskDuration')!.value
    await page.evaluate(() => ((window as any).__longTasks.length = 0))
    const before = await taskTime()
    await row(path).click()
    await page.waitForFunction((p) => document.querySelector('#detail h2')?.textContent?.endsWith(p), path, { timeout: 120_000 })
    // A rendered frame, then a task boundary for the observer's report.
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 50))))
    const taskSeconds = (await taskTime()) - before
    const longestTaskMs = await page.evaluate(() => Math.max(0, ...(window as any).__longTasks))
    await cdp.detach()
    return { taskSeconds, longestTaskMs }
  }

  const row = (path: string) => page.locator('#requests li').filter({ has: page.getByText(path, { exact: true }) }).locator('button.row')
  const waitForRow = (path: string) => row(path).waitFor()

  function assertCheap(path: string, t: { taskSeconds: number; longestTaskMs: number }) {
    assert.ok(t.taskSeconds < MAX_TASK_SECONDS, `${path}: ${t.taskSeconds.toFixed(2)} s of main-thread time to open`)
    assert.ok(t.longestTaskMs < MAX_LONG_TASK_MS, `${path}: a task of ${Math.round(t.longestTaskMs)} ms`)
  }

  const text = (selector: string) => page.locator(selector).textContent()

  it('an XML with a DTD (one 50 KB entity used 15,000 times) opens at once: the DTD shown as written, its entity never expanded', async () => {
    assertCheap('/xml-dtd', await open('/xml-dtd'))
    const pretty = (await text('#detail pre.pretty'))!
    assert.equal(pretty, `<?xml version="1.0"?>\n<!DOCTYPE r [<!ENTITY e "${ENTITY}">]>\n<r>${'&e;'.repeat(15_000)}</r>`)
    assert.equal(await text('#detail pre.raw'), XML_DTD)
    // The same size without a DTD: formatted too, one element per line.
    assertCheap('/xml-plain', await open('/xml-plain'))
    const plain = (await text('#detail pre.pretty'))!.split('\n')
    assert.deepEqual([plain.length, plain[1], plain[2], plain.at(-1)], [11_903, '<r>', '  <a>x</a>', '</r>'])
  })

  it('a form of 100,000 fields opens at once, raw, saying why; "Format anyway" then lays out every field', async () => {
    assertCheap('/form-100k', await open('/form-100k'))
    assert.equal(await page.locator('#detail table.form').count(), 0)
    assert.equal(
      await text('#detail .format-skipped p'),
      'Shown raw: the body is 868.1 KiB, over the 256 KiB formatted at once.',
    )
    assert.equal(await text('#detail pre.raw'), FORM)
    assert.match((await text('#detail pre.curl'))!, new RegExp(`--data-binary @request-\\d+\\.bin$`))
    // The user's choice: everything, once asked for (slow for this one, by design).
    await page.getByRole('button', { name: 'Format anyway' }).click()
    await page.waitForSelector('#detail table.form', { timeout: 120_000 })
    assert.equal(await page.locator('#detail table.form tr').count(), 100_000)
    assert.deepEqual(await page.locator('#detail table.form tr').last().locator('td').allTextContents(), ['f99999', '9'])
    assert.equal(await page.locator('#detail .format-skipped').count(), 0)
    assert.ok(await page.evaluate(() => document.activeElement?.matches('#detail table.form')))
  })

  it('a form of 20,000 fields (under 256 KiB) is formatted as text, its table waits for "Format anyway"; so does a query of 1,500 fields', async () => {
    const form = Array.from({ length: 20_000 }, (_, i) => `k${i}=v`).join('&')
    const query = Array.from({ length: 1_500 }, (_, i) => `q${i}`).join('&')
    await capture(`${ep.url}/form-20k?${query}`, { body: form, headers: { 'content-type': 'application/x-www-form-urlencoded' } })
    await waitForRow(`/form-20k?${query}`)
    assertCheap('/form-20k', await open(`/form-20k?${query}`))
    assert.equal(
      await text('#detail .format-skipped p'),
      'Shown raw: the query has 1,500 fields, over the 1,000 shown as a table at once; the form has 20,000 fields, over the 1,000 shown as a table at once.',
    )
    assert.equal(await page.locator('#detail table.form, #detail table.query').count(), 0)
    const pretty = (await text('#detail pre.pretty'))!.split('\n')
    assert.deepEqual([pretty.length, pretty[0], pretty.at(-1)], [20_000, 'k0 = v', 'k19999 = v'])
    await page.getByRole('button', { name: 'Format anyway' }).click()
    await page.waitForSelector('#detail table.form')
    assert.equal(await page.locator('#detail table.form tr').count(), 20_000)
    assert.equal(await page.locator('#detail table.query tr').count(), 1_500)
    // Focus on the first table that was held back.
    assert.ok(await page.evaluate(() => document.activeElement?.matches('#detail table.query')))
  })

  it('deep nesting (3,000 JSON arrays, 10,000 XML elements) is indented 16 levels at most, so its formatting stays small', async () => {
    assertCheap('/json-deep', await open('/json-deep'))
    const json = (await text('#detail pre.pretty'))!
    assert.equal(json.replace(/\s/g, ''), JSON_DEEP)
    assert.ok(json.length < 40 * JSON_DEEP.length, `${json.length} characters`)
    assertCheap('/xml-deep', await open('/xml-deep'))
    const xml = (await text('#detail pre.pretty'))!
    assert.equal(xml.replace(/\s/g, ''), XML_DEEP)
    assert.ok(xml.length < 40 * XML_DEEP.length, `${xml.length} characters`)
  })

  it('a 20 MiB body opens at once: its first 1 MiB is shown, cURL reads the body from the downloaded file', async () => {
    assertCheap('/text-20m', await open('/text-20m'))
    assert.equal((await text('#detail pre.raw'))!.length, 1024 * 1024)
    assert.equal(await text('#detail .raw-cut p'), `Showing the first 1,048,576 of ${TEXT_20M.length.toLocaleString('en')} characters; Download body saves all of it.`)
    assert.equal(await page.locator('#detail .format-skipped').count(), 0, 'plain text is not formatted, so nothing is skipped')
    const curl = (await text('#detail pre.curl'))!
    assert.ok(curl.length < 2000, `${curl.length} characters of cURL`)
    assert.match(curl, /--data-binary @request-\d+\.bin$/)
  })

  it('"Format anyway" and "Show all of it" are reached and pressed with the keyboard, focus the result, and are axe-clean', async () => {
    const big = { items: Array.from({ length: 9_000 }, (_, i) => ({ id: i, name: `item ${i}` })) }
    const bigJson = JSON.stringify(big)
    assert.ok(bigJson.length > 256 * 1024)
    await capture(`${ep.url}/big-json`, { body: bigJson, headers: { 'content-type': 'application/json' } })
    const long = 'z'.repeat(1024 * 1024 + 10)
    await capture(`${ep.url}/long-text`, { body: long, headers: { 'content-type': 'text/plain' } })
    await waitForRow('/long-text')

    await open('/big-json')
    assert.equal(await page.locator('#detail pre.pretty').count(), 0)
    assert.match((await text('#detail .format-skipped p'))!, /^Shown raw: the body is 2\d\d\.\d KiB|^Shown raw: the body is 3\d\d\.\d KiB/)
    assert.deepEqual(await axeViolations(page), [])
    // Tab from the row reaches the button; Enter presses it.
    await row('/big-json').focus()
    let onButton = false
    for (let i = 0; i < 30 && !onButton; i++) {
      await page.keyboard.press('Tab')
      onButton = await page.evaluate(() => document.activeElement?.matches('#detail button.format-anyway') ?? false)
    }
    assert.ok(onButton, 'Tab never reached Format anyway')
    await page.keyboard.press('Enter')
    await page.waitForSelector('#detail pre.pretty')
    assert.equal(await text('#detail pre.pretty'), JSON.stringify(big, null, 2))
    assert.ok(await page.evaluate(() => document.activeElement?.matches('#detail pre.pretty')), 'focus is on the formatted body')
    assert.deepEqual(await axeViolations(page), [])

    await open('/long-text')
    assert.equal((await text('#detail pre.raw'))!.length, 1024 * 1024)
    await page.locator('#detail button.show-all').focus()
    await page.keyboard.press('Space')
    await page.waitForFunction((n) => document.querySelector('#detail pre.raw')?.textContent?.length === n, long.length)
    assert.equal(await page.locator('#detail .raw-cut').count(), 0)
    assert.ok(await page.evaluate(() => document.activeElement?.matches('#detail pre.raw')))
    assert.deepEqual(await axeViolations(page), [])
  })

  it('formatting runs and loads nothing from a capture: XHTML script, handlers, xml-stylesheet, XInclude, external entities', async () => {
    const hostileXml =
      `<?xml version="1.0"?><?xml-stylesheet type="text/xsl" href="${trap.url}/xsl"?>` +
      `<!DOCTYPE html [<!ENTITY ext SYSTEM "${trap.url}/xxe"><!ENTITY % p SYSTEM "${trap.url}/param"> %p;]>` +
      `<html xmlns="http://www.w3.org/1999/xhtml"><script>window.__pwned=1</script><img src="${trap.url}/img" onerror="window.__pwned=2"/>` +
      `<svg xmlns="http://www.w3.org/2000/svg" onload="window.__pwned=3"/><xi:include xmlns:xi="http://www.w3.org/2001/XInclude" href="${trap.url}/xi"/><p>&ext;</p></html>`
    await capture(`${ep.url}/hostile-xml`, { body: hostileXml, headers: { 'content-type': 'application/xhtml+xml' } })
    const hostileJson = JSON.stringify({ html: `<img src="${trap.url}/json" onerror="window.__pwned=4">`, s: '<script>window.__pwned=5</script>' })
    await capture(`${ep.url}/hostile-json`, { body: hostileJson, headers: { 'content-type': 'application/json' } })
    const hostileForm = `a=${encodeURIComponent(`<img src="${trap.url}/form" onerror="window.__pwned=6">`)}&b=${encodeURIComponent('<script>window.__pwned=7</script>')}`
    await capture(`${ep.url}/hostile-form?q=${encodeURIComponent('<svg onload="window.__pwned=8">')}`, { body: hostileForm, headers: { 'content-type': 'application/x-www-form-urlencoded' } })
    const formPath = `/hostile-form?q=${encodeURIComponent('<svg onload="window.__pwned=8">')}`
    await waitForRow(formPath)

    assertCheap('/hostile-xml', await open('/hostile-xml'))
    const xml = (await text('#detail pre.pretty'))!
    assert.ok(xml.includes('  <script>window.__pwned=1</script>'), xml)
    assert.ok(xml.includes('  <p>&ext;</p>'), 'the external entity is shown, not resolved')
    assert.ok(xml.includes(`<!ENTITY ext SYSTEM "${trap.url}/xxe">`))
    await open('/hostile-json')
    assert.ok((await text('#detail pre.pretty'))!.includes('"s": "<script>window.__pwned=5</script>"'))
    await open(formPath)
    assert.deepEqual(await page.locator('#detail table.form td').allTextContents(), ['a', `<img src="${trap.url}/form" onerror="window.__pwned=6">`, 'b', '<script>window.__pwned=7</script>'])
    assert.deepEqual(await page.locator('#detail table.query td').allTextContents(), ['q', '<svg onload="window.__pwned=8">'])

    // Give anything that might have been scheduled its chance, then look.
    await page.evaluate(() => new Promise((r) => setTimeout(r, 300)))
    assert.equal(await page.evaluate(() => (window as any).__pwned), undefined)
    assert.equal(await page.evaluate(() => document.querySelectorAll('#detail img, #detail svg, #detail script, #detail iframe, #detail object').length), 0)
    const trapped = await get(api(sys, `/endpoints/${trap.endpoint_id}/requests`), { key })
    assert.deepEqual(trapped.json.requests, [], 'the page fetched something a capture named')
  })
})
