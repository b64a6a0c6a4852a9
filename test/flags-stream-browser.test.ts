// The change stream in Debian's Chromium, from a page on another origin, with two API replicas:
// the browser's own EventSource (key in the query string, as a browser must) hears a change made
// through the other replica; the OFREP web provider follows the advertised `eventStreams` instead
// of polling and shows the new value; a project that does not allow the page's origin keeps the
// stream from the page (the browser's CORS check).
import assert from 'node:assert/strict'
import type { Server } from 'node:http'
import type { Browser, Page } from 'playwright-core'
import { launchChromium } from './helpers/browser.ts'
import { call, post } from './helpers/http.ts'
import { bundleSdk, serveSite } from './helpers/ofrep-web.ts'
import { startSystem, type TestSystem } from './helpers/system.ts'

declare const OpenFeature: typeof import('@openfeature/web-sdk').OpenFeature
declare const OFREPWebProvider: typeof import('@openfeature/ofrep-web-provider').OFREPWebProvider

interface PageWindow {
  received: Array<{ id: string; data: string }>
  failed: number
  es: EventSource
}

describe('flags: change stream in Chromium (EventSource and the OFREP web provider), two replicas', function () {
  let a: TestSystem
  let b: TestSystem
  let site: { server: Server; origin: string }
  let browser: Browser
  let n = 0

  async function project(allowed_origins?: string[]) {
    const r = await post(`${a.root.flags}/api/v1/signup`, { email: `sse-browser${++n}@example.com` })
    assert.equal(r.status, 201, r.text)
    const t = { apiKey: r.json.api_key as string, sdkKey: r.json.sdk_key as string, projectId: r.json.project.id as string }
    const f = await post(`${a.root.flags}/api/v1/projects/${t.projectId}/flags`, { key: 'new-checkout', enabled: false }, { key: t.apiKey })
    assert.equal(f.status, 201, f.text)
    if (allowed_origins) {
      const p = await call('PATCH', `${a.root.flags}/api/v1/projects/${t.projectId}`, { json: { allowed_origins }, key: t.apiKey })
      assert.equal(p.status, 200, p.text)
    }
    return t
  }
  const toggle = async (t: { apiKey: string; projectId: string }, enabled: boolean) => {
    const r = await call('PUT', `${a.root.flags}/api/v1/projects/${t.projectId}/flags/new-checkout`, { json: { enabled }, key: t.apiKey })
    assert.equal(r.status, 200, r.text)
  }

  async function openPage(): Promise<Page> {
    const page = await browser.newPage()
    await page.goto(`${site.origin}/`)
    await page.waitForFunction(() => typeof (window as any).OFREPWebProvider === 'function')
    return page
  }

  /** A native EventSource in the page, its messages collected on window. */
  const openEventSource = (page: Page, url: string) =>
    page.evaluate((url) => {
      const w = window as unknown as PageWindow
      w.received = []
      w.failed = 0
      w.es = new EventSource(url)
      w.es.onmessage = (e) => w.received.push({ id: e.lastEventId, data: e.data })
      w.es.onerror = () => w.failed++
    }, url)
  const receivedCount = (page: Page, count: number) =>
    page.waitForFunction((count) => (window as unknown as PageWindow).received.length >= count, count, { polling: 50, timeout: 10_000 })
  const received = (page: Page) => page.evaluate(() => (window as unknown as PageWindow).received.map((m) => ({ id: m.id, data: JSON.parse(m.data) })))

  before(async () => {
    a = await startSystem({ services: ['flags'], workers: false })
    b = await startSystem({ services: ['flags'], workers: false, env: { MONGO_DB: a.env.MONGO_DB!, QUEUE_PREFIX: a.env.QUEUE_PREFIX! } })
    site = await serveSite(await bundleSdk())
    browser = await launchChromium()
  })
  after(async () => {
    await browser?.close()
    await new Promise((r) => site?.server.close(r))
    await b?.stop()
    await a?.stop()
  })

  it("the browser's EventSource on replica B hears a change made through replica A", async () => {
    const t = await project()
    const page = await openPage()
    await openEventSource(page, `${b.root.flags}/ofrep/v1/stream?sdk_key=${encodeURIComponent(t.sdkKey)}`)
    await receivedCount(page, 1)
    await toggle(t, true)
    await receivedCount(page, 2)
    const [hello, change] = await received(page)
    assert.equal(hello!.data.type, 'connected')
    assert.equal(change!.data.type, 'refetchEvaluation')
    assert.equal(change!.id, change!.data.etag)
    assert.notEqual(change!.id, hello!.id)
    await page.close()
  })

  it('the OFREP web provider follows eventStreams: the change reaches the page without polling', async () => {
    const t = await project()
    const page = await openPage()
    const requests: string[] = []
    page.on('request', (req) => {
      if (req.url().startsWith(b.root.flags) && req.method() !== 'OPTIONS') requests.push(`${req.method()} ${new URL(req.url()).pathname}${new URL(req.url()).search.replace(/sdk_key=[^&]+/, 'sdk_key=…')}`)
    })
    const first = await page.evaluate(
      async ({ api, sdkKey }) => {
        // A long poll interval: a change seen within the test came through the stream.
        const provider = new OFREPWebProvider({ baseUrl: api, headers: [['Authorization', `Bearer ${sdkKey}`]], pollInterval: 600_000 })
        await OpenFeature.setProviderAndWait(provider)
        await OpenFeature.setContext({ targetingKey: 'user-1' })
        return OpenFeature.getClient().getBooleanValue('new-checkout', true)
      },
      { api: b.root.flags, sdkKey: t.sdkKey },
    )
    assert.equal(first, false)
    for (const deadline = Date.now() + 10_000; !requests.includes('GET /ofrep/v1/stream?sdk_key=…'); ) {
      assert.ok(Date.now() < deadline, `the provider did not open the stream: ${requests.join(', ')}`)
      await new Promise((r) => setTimeout(r, 50))
    }
    await toggle(t, true)
    await page.waitForFunction(() => OpenFeature.getClient().getBooleanValue('new-checkout', false) === true, undefined, { polling: 50, timeout: 10_000 })
    // The re-fetch the event caused names the flag set's tag (ADR-0008's flagConfigEtag).
    assert.ok(requests.some((r) => /^POST \/ofrep\/v1\/evaluate\/flags\?flagConfigEtag=[\w-]{22}$/.test(r)), requests.join('\n'))
    await page.evaluate(() => OpenFeature.close())
    await page.close()
  })

  it("a project that does not allow the page's origin: the browser keeps the stream from the page", async () => {
    const t = await project(['https://elsewhere.example.com'])
    const page = await openPage()
    await openEventSource(page, `${b.root.flags}/ofrep/v1/stream?sdk_key=${encodeURIComponent(t.sdkKey)}`)
    await page.waitForFunction(() => (window as unknown as PageWindow).failed > 0, undefined, { polling: 50, timeout: 10_000 })
    await toggle(t, true)
    // The same stream from a server (no Origin) works: the refusal was the browser's.
    const r = await fetch(`${b.root.flags}/ofrep/v1/stream?sdk_key=${encodeURIComponent(t.sdkKey)}`)
    assert.equal(r.status, 200)
    await r.body?.cancel()
    assert.deepEqual(await received(page), [])
    await page.close()
  })
})
