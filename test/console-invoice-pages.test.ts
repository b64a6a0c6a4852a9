// The invoice console as served by the invoice service: the page at / and its deep links with the
// strict CSP (plus frame-src blob: for the preview, nothing else), the API under /api/v1 untouched,
// the bundle within its size budget; and in Chromium, every screen free of serious or critical
// axe-core violations at 1280×800 and 390×844 with no CSP violation, and an invoice made with the
// keyboard only.
import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import { gzipSync } from 'node:zlib'
import type { Page } from 'playwright-core'
import { CONSOLE_CSP, consoleCsp } from '../src/platform/http/console-pages.ts'
import { CONSOLE_PATHS } from '../src/invoice/app.ts'
import { axeViolations } from './helpers/a11y.ts'
import { cspViolations, DESKTOP, PHONE, shot, visit, type ConsolePage, type ConsoleRig, focusedElement, tabUntil } from './helpers/console.ts'
import { invoiceAccount, openInvoiceConsole, startInvoiceConsole } from './helpers/console-invoice.ts'
import { assertJsonError, call, get, post } from './helpers/http.ts'
import { pdfText } from './helpers/pdf.ts'

/** The budget of the issue: this console's JavaScript, gzipped. */
const JS_BUDGET_GZIP = 150 * 1024

async function settled(page: Page): Promise<void> {
  await page.locator('.preview-pane:not([aria-busy])').waitFor({ timeout: 20_000 })
  await page.locator('.preview-status', { hasText: 'Up to date.' }).waitFor({ timeout: 20_000 })
}

describe('invoice console: pages, budget, accessibility, keyboard (Chromium)', function () {
  this.timeout(90_000)
  let rig: ConsoleRig
  let key: string
  let batchId: string
  const pages: ConsolePage[] = []
  const api = (path: string) => `${rig.root}/api/v1${path}`
  before(async () => {
    rig = await startInvoiceConsole()
    key = (await invoiceAccount(rig)).key
    // Something on every screen: an invoice and a finished batch.
    assert.equal((await post(api('/invoice'), { invoice_number: 'A11Y-1', to: { name: 'Globex' }, items: [{ description: 'x', quantity: 1, unit_price: 1 }] }, { key })).status, 200)
    const b = await call('POST', api('/invoices/batch'), { json: [{ items: [{ description: 'y', quantity: 1, unit_price: 2 }] }], key })
    assert.equal(b.status, 202, b.text)
    batchId = b.json.batch_id
  })
  after(async () => {
    for (const p of pages) assert.deepEqual(await cspViolations(p.page), [], 'CSP violations')
    await rig?.stop()
  })
  const open = async (k: string | null, viewport = DESKTOP) => {
    const p = await openInvoiceConsole(rig, k, viewport)
    pages.push(p)
    return p
  }

  it('serves the page at / and at its deep links with the strict CSP and frames of blob: URLs only; the API is unchanged', async () => {
    assert.deepEqual(CONSOLE_PATHS, ['/invoices', '/batches', '/account', '/sign-in', '/demo', '/read'])
    const csp = consoleCsp({ blobFrames: true })
    assert.equal(csp, `${CONSOLE_CSP}; frame-src blob:`)
    for (const p of ['/', '/invoices', '/batches', `/batches/${batchId}`, '/account', '/sign-in', '/demo', '/read']) {
      const r = await get(`${rig.root}${p}`)
      assert.equal(r.status, 200, p)
      assert.match(r.headers.get('content-type') ?? '', /^text\/html/)
      assert.equal(r.headers.get('content-security-policy'), csp, p)
      assert.match(r.text, /<title>Invoices · queueworks<\/title>/)
      assert.doesNotMatch(r.text, /<script>|<script(?![^>]*\bsrc=)[^>]*>|<style|style=/, 'no inline script or style')
    }
    // The bundle's own files keep the plain policy (they are never framed or framing).
    const script = /<script[^>]*src="([^"]+)"/.exec((await get(`${rig.root}/`)).text)![1]!
    assert.equal((await get(`${rig.root}${script}`)).headers.get('content-security-policy'), CONSOLE_CSP)
    assertJsonError(await get(`${rig.root}/api/v1/nothing`), 404)
    assertJsonError(await get(`${rig.root}/invoicesx`), 404)
    assert.equal((await get(api('/invoices'))).status, 401, 'the API is not the page')
    assert.equal((await get(api('/invoices'), { key })).status, 200)
    const spec = (await get(`${rig.root}/openapi.json`)).json
    assert.ok(!Object.keys(spec.paths).some((p: string) => p === '/' || p === '/invoices' || p.startsWith('/console') || p === '/demo'))
  })

  it(`its JavaScript is at most ${JS_BUDGET_GZIP / 1024} KB gzipped`, async () => {
    const page = await get(`${rig.root}/`)
    const scripts = [...page.text.matchAll(/<script[^>]*src="([^"]+)"/g)].map((m) => m[1]!)
    assert.equal(scripts.length, 1)
    const bytes = Buffer.from(await (await fetch(`${rig.root}${scripts[0]}`)).arrayBuffer())
    const gz = gzipSync(bytes, { level: 9 }).length
    assert.ok(gz <= JS_BUDGET_GZIP, `${gz} bytes gzipped`)
    assert.doesNotMatch(bytes.toString(), /import\(["']/, 'no lazily loaded chunk adds to it')
  })

  for (const [name, viewport] of [['1280×800', DESKTOP], ['390×844', PHONE]] as const) {
    it(`${name}: every screen has no serious or critical axe-core violation`, async () => {
      const visitor = await open(null, viewport)
      await visit(visitor.page, '/', 'Invoice demo')
      await settled(visitor.page)
      assert.deepEqual(await axeViolations(visitor.page), [], 'demo')
      await visit(visitor.page, '/sign-in', 'Sign in')
      assert.deepEqual(await axeViolations(visitor.page), [], 'sign-in')
      const { page } = await open(key, viewport)
      await visit(page, '/', 'New invoice')
      await settled(page)
      assert.deepEqual(await axeViolations(page), [], 'editor')
      // With refusals at their fields.
      await page.locator('#f-items_0__quantity').fill('-1')
      await page.locator('#f-items_0__quantity-error').waitFor()
      assert.deepEqual(await axeViolations(page), [], 'editor with errors')
      if (viewport === PHONE) {
        await page.locator('#f-items_0__quantity-error').scrollIntoViewIfNeeded()
        await shot(page, 'invoice-editor-phone')
      }
      await page.locator('#f-items_0__quantity').fill('1')
      const screens: Array<[string, string, string]> = [
        ['/invoices', 'Invoices', 'A11Y-1'],
        ['/batches', 'Batches', batchId],
        [`/batches/${batchId}`, `Batch ${batchId}`, 'Rows'],
        ['/account', 'Account', 'Invoices this month'],
        ['/read', 'Read a received e-invoice', 'Received e-invoice file'],
      ]
      for (const [path, heading, content] of screens) {
        await visit(page, path, heading)
        await page.locator('main').getByText(content).first().waitFor()
        assert.deepEqual(await axeViolations(page), [], path)
      }
      await visit(page, '/account', 'Account')
      await page.getByRole('button', { name: 'Rotate API key' }).click()
      await page.getByRole('dialog').waitFor()
      assert.deepEqual(await axeViolations(page), [], 'rotate dialog')
      await page.keyboard.press('Escape')
      // Nothing wider than the phone but the tables' own scrolling regions.
      if (viewport === PHONE) {
        for (const path of ['/', '/invoices', '/account']) {
          await page.goto(path)
          await page.locator('h1').waitFor()
          assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= innerWidth), `${path} scrolls sideways`)
        }
      }
    })
  }

  it('keyboard only: fill an invoice, add and move a line, see its preview, download it, find it in the history', async () => {
    const { page } = await open(key)
    await visit(page, '/', 'New invoice')
    await settled(page)
    const focused = () => focusedElement(page)
    const tabTo = (want: RegExp) => tabUntil(page, want, 120)
    await tabTo(/^input#f-invoice_number/)
    await page.keyboard.press('Control+A')
    await page.keyboard.type('KB-1')
    await tabTo(/^button#add-line/)
    await page.keyboard.press('Enter')
    // Focus goes to the new line's description.
    await page.waitForFunction(() => document.activeElement?.id === 'f-items_1__description')
    await page.keyboard.type('Keyboard work')
    await page.keyboard.press('Tab')
    await page.keyboard.press('Control+A')
    await page.keyboard.type('2')
    await page.keyboard.press('Tab')
    await page.keyboard.type('7.25')
    await tabTo(/^button#up-\d+:Move line 2 up/)
    await page.keyboard.press('Enter')
    // The line moved and the focus went with it (now its Down button, as line 1).
    await page.waitForFunction(() => (document.getElementById('f-items_0__description') as HTMLInputElement)?.value === 'Keyboard work')
    await page.waitForFunction(() => /^down-/.test(document.activeElement?.id ?? ''), undefined, { timeout: 5_000 }).catch(() => {})
    assert.match(await focused(), /^button#down-\d+:Move line 1 down/)
    await settled(page)
    await tabTo(/^button:Download PDF/)
    const [dl] = await Promise.all([page.waitForEvent('download'), page.keyboard.press('Enter')])
    const text = pdfText(await readFile((await dl.path())!))
    assert.match(text, /KB-1/)
    assert.ok(text.indexOf('Keyboard work') < text.indexOf('Consulting'), 'the moved line comes first')
    // To the history through the navigation, with the keyboard.
    await page.locator('h1').focus()
    await page.keyboard.press('Shift+Tab')
    for (let i = 0; i < 10 && !/^a:Invoices$/.test(await focused()); i++) await page.keyboard.press('Shift+Tab')
    assert.match(await focused(), /^a:Invoices$/)
    await page.keyboard.press('Enter')
    await page.getByRole('heading', { level: 1, name: 'Invoices' }).waitFor()
    assert.match(await focused(), /^h1/, "focus moves to the new screen's heading")
    await page.getByRole('rowheader', { name: 'KB-1' }).waitFor()
  })
})
