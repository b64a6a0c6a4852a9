// The webhooks console in Chromium for the console-webhooks-* tests: one webhook service (with
// workers, so forwards, retries and recoveries really run), one browser per test file, pages
// signed in by a session cookie made through the API (the sign-in form itself is tested once).
// CSP violations, screenshots and viewports are test/helpers/console.ts's.
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { launchChromium } from './browser.ts'
import { DESKTOP } from './console.ts'
import { signIn } from './console-session.ts'
import { startSystem, type TestSystem } from './system.ts'

export interface WebhooksRig {
  sys: TestSystem
  browser: Browser
  /** http://127.0.0.1:PORT of the webhook service (the console is at /). */
  root: string
  stop(): Promise<void>
}

export async function startWebhooksConsole(opts: { workers?: boolean; env?: Record<string, string> } = {}): Promise<WebhooksRig> {
  const sys = await startSystem({ services: ['webhooks'], workers: opts.workers ?? true, env: { TRUST_PROXY: 'true', ...opts.env } })
  const root = sys.root.webhooks!
  // The first request builds the bundle (when its sources changed): done once here, not in a test.
  const page = await fetch(`${root}/`)
  if (page.status !== 200) throw new Error(`console page: ${page.status}`)
  const browser = await launchChromium()
  return {
    sys,
    browser,
    root,
    async stop() {
      await browser.close()
      await sys.stop()
    },
  }
}

export interface WebhooksPage {
  context: BrowserContext
  page: Page
  /** Console errors and uncaught exceptions of the page. */
  errors: string[]
}

/** A browser context on the console; signed in with `apiKey` when given. */
export async function openWebhooksConsole(rig: WebhooksRig, apiKey: string | null, viewport = DESKTOP): Promise<WebhooksPage> {
  const context = await rig.browser.newContext({ viewport, deviceScaleFactor: 1, baseURL: rig.root, reducedMotion: 'reduce' })
  if (apiKey) {
    const s = await signIn(rig.root, apiKey)
    const [name, value] = s.cookie.split('=') as [string, string]
    await context.addCookies([{ name, value, url: rig.root, httpOnly: true, sameSite: 'Strict' }])
  }
  await context.addInitScript(() => {
    ;(window as any).__csp = []
    document.addEventListener('securitypolicyviolation', (e) => (window as any).__csp.push(`${e.violatedDirective} ${e.blockedURI}`))
  })
  const page = await context.newPage()
  const errors: string[] = []
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text())
  })
  page.on('pageerror', (e) => errors.push(`uncaught: ${e.message}`))
  return { context, page, errors }
}
