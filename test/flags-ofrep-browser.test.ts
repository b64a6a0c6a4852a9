// The OpenFeature web SDK with the OFREP web provider, bundled with esbuild, on a page served from
// another origin (another port of 127.0.0.1), in Debian's Chromium: the browser's own CORS checks
// (preflight for Authorization / Content-Type / If-None-Match, ETag read by the provider's polls)
// against the service. A flag changed through the API reaches the page by polling; a page whose
// origin the project does not allow cannot read evaluations. Typed flags (number, object, variants)
// read through the web provider, and TYPE_MISMATCH for the wrong type.
import assert from 'node:assert/strict'
import type { Server } from 'node:http'
import { type Browser, type Page } from 'playwright-core'
import { startSystem, type TestSystem } from './helpers/system.ts'
import { call, post } from './helpers/http.ts'
import { launchChromium } from './helpers/browser.ts'
import { bundleSdk, serveSite } from './helpers/ofrep-web.ts'

declare const OpenFeature: typeof import('@openfeature/web-sdk').OpenFeature
declare const OFREPWebProvider: typeof import('@openfeature/ofrep-web-provider').OFREPWebProvider

describe('flags: OFREP web provider in Chromium, from another origin', function () {
  let sys: TestSystem
  let api: string
  let site: { server: Server; origin: string }
  let browser: Browser
  let n = 0

  async function project() {
    const r = await post(`${api}/api/v1/signup`, { email: `browser${++n}@example.com` })
    assert.equal(r.status, 201, r.text)
    const t = { apiKey: r.json.api_key as string, sdkKey: r.json.sdk_key as string, projectId: r.json.project.id as string }
    const f = await post(`${api}/api/v1/projects/${t.projectId}/flags`, { key: 'new-checkout', enabled: false }, { key: t.apiKey })
    assert.equal(f.status, 201, f.text)
    return t
  }

  async function openPage(): Promise<Page> {
    const page = await browser.newPage()
    await page.goto(`${site.origin}/`)
    await page.waitForFunction(() => typeof (window as any).OFREPWebProvider === 'function')
    return page
  }

  before(async () => {
    sys = await startSystem({ services: ['flags'], workers: false })
    api = sys.root.flags
    site = await serveSite(await bundleSdk())
    assert.notEqual(new URL(site.origin).port, new URL(api).port)
    browser = await launchChromium()
  })
  after(async () => {
    await browser?.close()
    await new Promise((r) => site?.server.close(r))
    await sys?.stop()
  })

  it('reads a flag, then sees it change through the API by polling (with ETag / 304 polls in between)', async () => {
    const t = await project()
    const page = await openPage()
    const polls: number[] = []
    page.on('response', (res) => {
      if (res.url() === `${api}/ofrep/v1/evaluate/flags`) polls.push(res.status())
    })

    const first = await page.evaluate(
      async ({ api, sdkKey }) => {
        // Polling on purpose: with the advertised change stream the provider would not poll (flags-stream-browser.test.ts).
        const provider = new OFREPWebProvider({ baseUrl: api, headers: [['Authorization', `Bearer ${sdkKey}`]], pollInterval: 500, changeDetection: 'polling' })
        await OpenFeature.setProviderAndWait(provider)
        await OpenFeature.setContext({ targetingKey: 'user-1', country: 'DE' })
        const d = OpenFeature.getClient().getBooleanDetails('new-checkout', true)
        return { value: d.value, reason: d.reason, errorCode: d.errorCode ?? null }
      },
      { api, sdkKey: t.sdkKey },
    )
    assert.deepEqual(first, { value: false, reason: 'DISABLED', errorCode: null })

    // Unchanged flags: the provider polls with If-None-Match (it could read the exposed ETag) and gets 304.
    const deadline = Date.now() + 15_000
    while (!polls.includes(304) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100))
    assert.ok(polls.includes(304), `polls: ${polls.join(',')}`)

    const put = await call('PUT', `${api}/api/v1/projects/${t.projectId}/flags/new-checkout`, { json: { enabled: true }, key: t.apiKey })
    assert.equal(put.status, 200, put.text)
    await page.waitForFunction(() => OpenFeature.getClient().getBooleanValue('new-checkout', false) === true, undefined, { polling: 100, timeout: 15_000 })
    const after = await page.evaluate(() => OpenFeature.getClient().getBooleanDetails('new-checkout', false).reason)
    assert.equal(after, 'DEFAULT')
    assert.ok(polls.every((s) => s === 200 || s === 304), `polls: ${polls.join(',')}`)
    await page.evaluate(() => OpenFeature.close())
    await page.close()
  })

  it('typed flags: numbers, objects and variants in the page; the wrong type is TYPE_MISMATCH', async () => {
    const t = await project()
    const flags = `${api}/api/v1/projects/${t.projectId}/flags`
    for (const body of [
      { key: 'max-items', type: 'number', enabled: true, default_value: 10, rules: [{ conditions: [{ attribute: 'country', operator: 'in', value: ['DE'] }], value: 25 }] },
      { key: 'theme', type: 'object', enabled: true, default_value: { color: 'green', sizes: [1, 2] } },
      { key: 'banner', type: 'string', enabled: true, default_value: 'none', fallthrough: { variants: [{ name: 'only', weight: 100, value: 'spring' }] } },
    ]) {
      const f = await post(flags, body, { key: t.apiKey })
      assert.equal(f.status, 201, f.text)
    }
    const page = await openPage()
    const got = await page.evaluate(
      async ({ api, sdkKey }) => {
        await OpenFeature.setProviderAndWait(new OFREPWebProvider({ baseUrl: api, headers: [['Authorization', `Bearer ${sdkKey}`]], pollInterval: 60_000 }))
        await OpenFeature.setContext({ targetingKey: 'user-1', country: 'DE' })
        const c = OpenFeature.getClient()
        const wrong = c.getNumberDetails('theme', 7)
        const banner = c.getStringDetails('banner', 'x')
        return {
          number: c.getNumberValue('max-items', 0),
          object: c.getObjectValue('theme', {}),
          banner: [banner.value, banner.variant],
          wrong: [wrong.value, wrong.errorCode ?? null],
        }
      },
      { api, sdkKey: t.sdkKey },
    )
    assert.deepEqual(got, { number: 25, object: { color: 'green', sizes: [1, 2] }, banner: ['spring', 'only'], wrong: [7, 'TYPE_MISMATCH'] })
    await page.evaluate(() => OpenFeature.close())
    await page.close()
  })

  it('a page whose origin the project does not allow cannot read evaluations; allowing it opens them', async () => {
    const t = await project()
    const limit = await call('PATCH', `${api}/api/v1/projects/${t.projectId}`, { json: { allowed_origins: ['https://app.example.com'] }, key: t.apiKey })
    assert.equal(limit.status, 200, limit.text)
    const page = await openPage()
    const tryFetch = () =>
      page.evaluate(
        async ({ api, sdkKey }) => {
          try {
            const r = await fetch(`${api}/ofrep/v1/evaluate/flags`, {
              method: 'POST',
              headers: { authorization: `Bearer ${sdkKey}`, 'content-type': 'application/json' },
              body: JSON.stringify({ context: { targetingKey: 'u' } }),
            })
            return { ok: true, status: r.status, etag: r.headers.get('etag') }
          } catch (err) {
            return { ok: false, error: String(err) }
          }
        },
        { api, sdkKey: t.sdkKey },
      )
    const refused = await tryFetch()
    assert.equal(refused.ok, false, JSON.stringify(refused))
    assert.match(String(refused.error), /TypeError|Failed to fetch/)

    // The provider on that page gets nothing either: it reports an error instead of flag values.
    const viaSdk = await page.evaluate(
      async ({ api, sdkKey }) => {
        const provider = new OFREPWebProvider({ baseUrl: api, headers: [['Authorization', `Bearer ${sdkKey}`]], pollInterval: 0 })
        await OpenFeature.setProviderAndWait('limited', provider).catch(() => undefined)
        const d = OpenFeature.getClient('limited').getBooleanDetails('new-checkout', true)
        return { value: d.value, reason: d.reason }
      },
      { api, sdkKey: t.sdkKey },
    )
    assert.deepEqual(viaSdk, { value: true, reason: 'ERROR' })

    const allow = await call('PATCH', `${api}/api/v1/projects/${t.projectId}`, { json: { allowed_origins: ['https://app.example.com', site.origin] }, key: t.apiKey })
    assert.equal(allow.status, 200, allow.text)
    const granted = await tryFetch()
    assert.equal(granted.ok, true, JSON.stringify(granted))
    assert.equal(granted.status, 200)
    assert.ok(granted.etag, 'ETag readable by the page')
    await page.evaluate(() => OpenFeature.close())
    await page.close()
  })
})
