// A capture URL whose configured response is HTML with script, served on the
// inspection page's origin, must not read the account key another account's inspection page
// holds. Replays the reported attack in Chromium, then checks every response that carries
// outsider-chosen bytes for the headers that keep it inert.
import assert from 'node:assert/strict'
import type { Browser } from 'playwright-core'
import { startSystem, type TestSystem } from './helpers/system.ts'
import { call, get, post } from './helpers/http.ts'
import { api, capture, createEndpoint, signup } from './helpers/webhooks.ts'
import { UNTRUSTED_CSP } from '../src/webhooks/untrusted-response.ts'
import { launchChromium } from './helpers/browser.ts'

const STEAL = 'document.title="LEAK:"+JSON.stringify({s:sessionStorage,l:localStorage,c:document.cookie})'

describe('webhooks: captured and configured content never runs where keys live (Debian chromium)', function () {
  this.timeout(90_000)
  let sys: TestSystem
  let browser: Browser
  let victimKey: string
  let victimEp: any
  let attackerKey: string
  before(async () => {
    sys = await startSystem({ services: ['webhooks'], workers: false })
    victimKey = await signup(sys)
    victimEp = await createEndpoint(sys, victimKey, { name: 'victim' })
    attackerKey = await signup(sys, 'business')
    browser = await launchChromium()
  })
  after(async () => {
    await browser?.close()
    await sys?.stop()
  })

  /** Opens the victim's inspection page with its key, as the reported attack starts. */
  async function victimTab() {
    const page = await browser.newPage()
    await capture(victimEp.url, { body: '{"a":1}', headers: { 'content-type': 'application/json' } })
    await page.goto(`${victimEp.inspect_url}#key=${victimKey}`)
    await page.waitForSelector('#requests li')
    return page
  }

  for (const [type, body] of [
    ['text/html', `<script>${STEAL}</script>`],
    ['image/svg+xml', `<svg xmlns="http://www.w3.org/2000/svg"><script>${STEAL}</script></svg>`],
    ['text/html; charset=utf-8', `<img src=x onerror='${STEAL}'>`],
  ] as const) {
    it(`another account's ${type} capture response, opened in the victim's tab, runs no script and sees no key`, async () => {
      const hostile = await createEndpoint(sys, attackerKey, { response_content_type: type, response_body: body })
      const page = await victimTab()
      // The key is held in the page's memory only: nothing in web storage for any document to read.
      assert.equal(await page.evaluate(() => sessionStorage.length + localStorage.length), 0)
      const res = await page.goto(hostile.url)
      assert.equal(res!.status(), 200)
      // The document loaded; give any script its chance (the load event), then look.
      await page.waitForLoadState('load')
      const title = await page.title()
      assert.ok(!title.startsWith('LEAK'), `script ran: ${title}`)
      assert.ok(!title.includes(victimKey))
      assert.equal(res!.headers()['content-security-policy'], UNTRUSTED_CSP)
      // Sandboxed: the document's origin is opaque, so even a script could not reach our storage.
      assert.equal(await page.evaluate(() => origin), 'null')
      await page.close()
    })
  }

  it('the inspection page loads no script or stylesheet but its own, not even a capture URL of this origin', async () => {
    // A capture URL answering JavaScript and CSS: under `script-src 'self'` markup injected into the
    // page (by a future rendering bug) could load it as code. The page's nonce policy refuses it.
    const js = await createEndpoint(sys, attackerKey, { response_content_type: 'text/javascript', response_body: 'window.__pwned = document.title' })
    const css = await createEndpoint(sys, attackerKey, { response_content_type: 'text/css', response_body: 'body { background: rgb(255, 0, 0) }' })
    const page = await victimTab()
    // Each element reports whether it loaded or was refused (a CSP refusal fires `error`).
    const outcome = await page.evaluate(
      ([jsUrl, cssUrl]) =>
        Promise.all(
          [Object.assign(document.createElement('script'), { src: jsUrl }), Object.assign(document.createElement('link'), { rel: 'stylesheet', href: cssUrl })].map(
            (e) =>
              new Promise<string>((resolve) => {
                e.addEventListener('load', () => resolve('loaded'))
                e.addEventListener('error', () => resolve('refused'))
                document.head.append(e)
              }),
          ),
        ),
      [js.url, css.url],
    )
    assert.deepEqual(outcome, ['refused', 'refused'])
    assert.equal(await page.evaluate(() => (window as any).__pwned), undefined)
    assert.notEqual(await page.evaluate(() => getComputedStyle(document.body).backgroundColor), 'rgb(255, 0, 0)')
    // The page itself still works under its policy: its script ran and its stylesheet applied.
    assert.ok((await page.locator('#requests li').count()) > 0)
    assert.equal(await page.evaluate(() => getComputedStyle(document.querySelector('header')!).display), 'flex')
    await page.close()
  })

  it('a key kept in sessionStorage by an earlier version of the page is wiped, and a reload asks for the key again', async () => {
    const page = await victimTab()
    await page.evaluate((k) => sessionStorage.setItem(`wv-key:${document.body.dataset.token}`, k), victimKey)
    await page.reload()
    await page.waitForSelector('#key-form:not([hidden])')
    assert.equal(await page.evaluate(() => sessionStorage.length), 0)
    await page.fill('#key-input', victimKey)
    await page.click('#key-form button')
    await page.waitForSelector('#requests li')
    assert.equal(await page.evaluate(() => sessionStorage.length), 0)
    assert.equal(await page.inputValue('#key-input'), '')
    await page.close()
  })

  it('every capture answer (configured, HEAD, unknown token) and every API answer with captured bytes is sandboxed and nosniff', async () => {
    const ep = await createEndpoint(sys, attackerKey, { response_content_type: 'text/html', response_body: '<script>alert(1)</script>' })
    const check = (r: { status: number; headers: Headers }, what: string) => {
      assert.equal(r.headers.get('content-security-policy'), UNTRUSTED_CSP, `${what} (${r.status})`)
      assert.equal(r.headers.get('x-content-type-options'), 'nosniff', what)
    }
    check(await capture(`${ep.url}/sub?q=1`, { body: '<script>1</script>', headers: { 'content-type': 'text/html' } }), 'POST capture')
    check(await get(ep.url), 'GET capture')
    check(await call('HEAD', ep.url), 'HEAD capture')
    check(await call('OPTIONS', ep.url), 'preflight')
    check(await get(`${sys.url.webhooks}/hook/${'Z'.repeat(22)}`), 'unknown token')
    const list = await get(api(sys, `/endpoints/${ep.endpoint_id}/requests`), { key: attackerKey })
    check(list, 'list')
    const id = list.json.requests.at(-1).id
    check(await get(api(sys, `/endpoints/${ep.endpoint_id}/requests/${id}`), { key: attackerKey }), 'one request')
    const raw = await get(api(sys, `/endpoints/${ep.endpoint_id}/requests/${id}/body`), { key: attackerKey })
    check(raw, 'raw body')
    assert.equal(raw.headers.get('content-type'), 'application/octet-stream')
    assert.match(raw.headers.get('content-disposition')!, /^attachment;/)
  })

  it('a configured response cannot add headers of its own (no CSP, Set-Cookie or other header through the content type)', async () => {
    for (const ct of ['text/html\r\nContent-Security-Policy: script-src *', 'text/html\nSet-Cookie: k=v', 'text/html\u0000']) {
      const r = await post(api(sys, '/endpoints'), { response_content_type: ct }, { key: attackerKey })
      assert.equal(r.status, 400, ct)
      assert.match(r.json.error, /response_content_type/)
    }
    const r = await post(api(sys, '/endpoints'), { response_headers: { 'set-cookie': 'k=v' } }, { key: attackerKey })
    assert.equal(r.status, 400)
  })
})
