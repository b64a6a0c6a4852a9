// The invoice console in Chromium for the console-invoice-* tests: one invoice service with its
// workers (previews and downloads are real renders), one browser per test file, accounts made
// through the API and pages signed in with a session cookie (the sign-in form itself is tested in
// test/console-invoice-account.test.ts). Page reports (CSP, errors) and screenshots: helpers/console.ts.
import { launchChromium } from './browser.ts'
import { signIn } from './console-session.ts'
import { DESKTOP, type ConsolePage, type ConsoleRig } from './console.ts'
import { post } from './http.ts'
import { startSystem } from './system.ts'

export async function startInvoiceConsole(opts: { env?: Record<string, string> } = {}): Promise<ConsoleRig> {
  const sys = await startSystem({ services: ['invoice'], workers: true, env: { TRUST_PROXY: 'true', ...opts.env } })
  const root = sys.root.invoice!
  // The first request builds the bundle (when its sources changed): done once here, not in a test.
  const page = await fetch(`${root}/`)
  if (page.status !== 200) throw new Error(`console page: ${page.status} ${await page.text()}`)
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

let n = 0
/** A new invoice account through the API: its key. */
export async function invoiceAccount(rig: ConsoleRig): Promise<{ key: string; email: string }> {
  const email = `console-invoice-${Date.now()}-${n++}@example.com`
  const r = await post(`${rig.root}/api/v1/signup`, { email })
  if (r.status !== 200) throw new Error(`signup: ${r.status} ${r.text}`)
  return { key: r.json.api_key, email }
}

/** A browser context on the console, signed in with `key` when given; CSP violations and errors recorded. */
export async function openInvoiceConsole(rig: ConsoleRig, key: string | null, viewport = DESKTOP): Promise<ConsolePage> {
  const context = await rig.browser.newContext({ viewport, deviceScaleFactor: 1, baseURL: rig.root, reducedMotion: 'reduce', acceptDownloads: true })
  if (key) {
    const s = await signIn(rig.root, key)
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
