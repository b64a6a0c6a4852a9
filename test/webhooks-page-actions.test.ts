// The inspection page as a debugger (Debian chromium at 1280×800): the capture URL with a copy
// button, query and form-field tables, rows showing the sub-path only, and per capture replay /
// verify signature / download body / delete through the API; reachable with the keyboard; axe-core
// run inside the page finds no serious or critical violation. The phone width and the
// "disconnected, reconnecting…" status are checked in webhooks-inspect-mobile and -live.
import assert from 'node:assert/strict'
import { createHmac } from 'node:crypto'
import { readFileSync } from 'node:fs'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { startSystem, type TestSystem } from './helpers/system.ts'
import { call, get } from './helpers/http.ts'
import { api, capture, createEndpoint, signup, startTarget, type Target } from './helpers/webhooks.ts'
import { launchChromium } from './helpers/browser.ts'
import { axeViolations } from './helpers/a11y.ts'

function stripeSignature(body: string, secret: string): string {
  const t = Math.floor(Date.now() / 1000)
  return `t=${t},v1=${createHmac('sha256', secret).update(`${t}.${body}`).digest('hex')}`
}

describe('webhooks: inspection page actions, keyboard and accessibility (Debian chromium)', function () {
  this.timeout(90_000)
  let sys: TestSystem
  let browser: Browser
  let target: Target
  before(async () => {
    sys = await startSystem({ services: ['webhooks'], workers: { queues: ['capture-replay'] } })
    browser = await launchChromium()
    target = await startTarget((r, _i, res) => res.end(`got ${r.body.length} bytes`))
  })
  after(async () => {
    await browser?.close()
    await target?.close()
    await sys?.stop()
  })

  async function open(context: BrowserContext, ep: any, key: string): Promise<{ page: Page; errors: string[] }> {
    const page = await context.newPage()
    const errors: string[] = []
    page.on('pageerror', (e) => errors.push(e.message))
    await page.goto(`${ep.inspect_url}#key=${key}`)
    await page.waitForFunction(() => document.getElementById('status')?.textContent?.endsWith('· live'))
    return { page, errors }
  }

  it('1280×800: capture URL + copy, sub-paths, query and form tables, keyboard, verify, replay, download, delete, axe clean', async () => {
    const key = await signup(sys, 'starter')
    const ep = await createEndpoint(sys, key, { name: 'stripe + forms', forward_url: `${target.url}/in` })
    const event = JSON.stringify({ id: 'evt_1', object: 'event', type: 'invoice.paid' })
    await capture(`${ep.url}/stripe/events?attempt=1&mode=live%20test`, {
      body: event,
      headers: { 'content-type': 'application/json', 'stripe-signature': stripeSignature(event, 'whsec_page') },
    })
    await capture(`${ep.url}/form`, { body: 'Body=Hello%20there&From=%2B15557654321&tag=a&tag=b', headers: { 'content-type': 'application/x-www-form-urlencoded' } })

    const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, acceptDownloads: true })
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(ep.url).origin })
    const { page, errors } = await open(context, ep, key)
    await page.waitForFunction(() => document.querySelectorAll('#requests li').length === 2)

    // The capture URL, and its copy button.
    assert.equal(await page.locator('#capture-url').textContent(), ep.url)
    await page.click('#copy-url')
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), ep.url)

    // Rows show the path below the endpoint: the token is not repeated on every row.
    const rowTexts = await page.locator('#requests li .path').allTextContents()
    assert.deepEqual(rowTexts, ['/form', '/stripe/events?attempt=1&mode=live%20test'])
    assert.ok(!(await page.locator('#requests').textContent())!.includes(ep.endpoint_id))

    // Keyboard: Tab reaches the rows, Enter opens one.
    let onRow = false
    for (let i = 0; i < 20 && !onRow; i++) {
      await page.keyboard.press('Tab')
      onRow = await page.evaluate(() => document.activeElement?.matches('#requests button.row') ?? false)
    }
    assert.ok(onRow, 'Tab never reached a request row')
    await page.keyboard.press('Enter')
    await page.waitForSelector('#detail table.form')
    assert.deepEqual(
      await page.locator('#detail table.form tr').evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent))),
      [['Body', 'Hello there'], ['From', '+15557654321'], ['tag', 'a'], ['tag', 'b']],
    )
    assert.equal(await page.locator('#detail h2').textContent(), 'POST /form')

    // The other capture, opened with the keyboard too: ArrowDown is not needed, Tab moves to it.
    await page.keyboard.press('Tab')
    assert.ok(await page.evaluate(() => document.activeElement?.closest('li')?.dataset.id === '1'))
    await page.keyboard.press('Enter')
    await page.waitForSelector('#detail table.query')
    assert.deepEqual(
      await page.locator('#detail table.query tr').evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent))),
      [['attempt', '1'], ['mode', 'live test']],
    )
    assert.equal(await page.locator('#detail table.form').count(), 0, 'no form table for a JSON body')

    // Every action control is reachable with Tab from the row.
    const reached = new Set<string>()
    for (let i = 0; i < 20; i++) {
      await page.keyboard.press('Tab')
      const label = await page.evaluate(() => {
        const a = document.activeElement as HTMLElement | null
        return a?.closest('#detail') ? (a.textContent || a.getAttribute('id') || a.tagName) : ''
      })
      if (label) reached.add(label)
    }
    for (const want of ['Download body', 'Delete', 'Replay', 'Verify signature']) assert.ok(reached.has(want), `Tab did not reach ${want}: ${[...reached].join(' | ')}`)

    // Verify: detected as Stripe, wrong secret then the right one.
    const secret = page.getByLabel('Secret or key')
    await secret.fill('whsec_wrong')
    await page.getByRole('button', { name: 'Verify signature' }).click()
    await page.waitForFunction(() => /^Not valid stripe signature: /.test(document.querySelector('#detail .action-result')!.textContent!))
    await secret.fill('whsec_page')
    await secret.press('Enter')
    await page.waitForFunction(() => /^Valid stripe signature: signature 1 of 1 matches/.test(document.querySelector('#detail .action-result')!.textContent!))
    assert.ok(await page.locator('#detail .action-result.good').isVisible())

    // Replay: prefilled with the forward target; the target gets the exact body.
    assert.equal(await page.getByLabel('Replay to').inputValue(), `${target.url}/in`)
    const before = target.received.length
    await page.getByRole('button', { name: 'Replay', exact: true }).click()
    await page.waitForFunction(() => /answered 200/.test(document.querySelector('#detail .action-result')!.textContent!), null, { timeout: 30_000 })
    assert.equal(target.received.length, before + 1)
    assert.equal(target.received.at(-1)!.body.toString(), event)
    assert.equal(await page.locator('#detail pre.replay-answer').textContent(), `got ${Buffer.byteLength(event)} bytes`)
    // A URL the SSRF rules refuse is a clear message, nothing sent.
    await page.getByLabel('Replay to').fill('http://user:pw@example.com/')
    await page.getByRole('button', { name: 'Replay', exact: true }).click()
    await page.waitForFunction(() => /^Replay failed: .*url/.test(document.querySelector('#detail .action-result')!.textContent!))
    assert.equal(target.received.length, before + 1)

    // Download: the exact stored bytes, as a file.
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download body' }).click()])
    assert.equal(download.suggestedFilename(), 'request-1.bin')
    assert.equal(readFileSync((await download.path())!, 'utf8'), event)

    assert.deepEqual(await axeViolations(page), [])

    // Delete: the first press asks, the second deletes; the row and the stored capture are gone.
    await page.getByRole('button', { name: 'Delete' }).click()
    await page.getByRole('button', { name: 'Press again to delete #1' }).click()
    await page.waitForFunction(() => document.querySelectorAll('#requests li').length === 1)
    assert.equal((await get(api(sys, `/endpoints/${ep.endpoint_id}/requests/1`), { key })).status, 404)
    assert.equal((await get(api(sys, `/endpoints/${ep.endpoint_id}/requests/2`), { key })).status, 200)
    assert.deepEqual(errors, [])
    await context.close()
  })

  it('DELETE …/requests/{id}: another account\'s capture or an unknown id is a 404 and deletes nothing', async () => {
    const key = await signup(sys)
    const other = await signup(sys)
    const ep = await createEndpoint(sys, key)
    await capture(ep.url, { body: 'keep me' })
    assert.equal((await call('DELETE', api(sys, `/endpoints/${ep.endpoint_id}/requests/1`), { key: other })).status, 404)
    assert.equal((await call('DELETE', api(sys, `/endpoints/${ep.endpoint_id}/requests/99`), { key })).status, 404)
    const bad = await call('DELETE', api(sys, `/endpoints/${ep.endpoint_id}/requests/abc`), { key })
    assert.equal(bad.status, 400)
    assert.ok(bad.json.error)
    assert.equal((await get(api(sys, `/endpoints/${ep.endpoint_id}/requests/1`), { key })).status, 200)
    const ok = await call('DELETE', api(sys, `/endpoints/${ep.endpoint_id}/requests/1`), { key })
    assert.deepEqual(ok.json, { deleted: true, id: 1 })
    assert.equal((await call('DELETE', api(sys, `/endpoints/${ep.endpoint_id}/requests/1`), { key })).status, 404)
  })
})
