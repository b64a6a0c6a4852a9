// The flags console in Chromium for the console-* tests: one flags service (real workers when a
// test needs deliveries), one browser per test file, pages signed in by a session cookie made
// through the API (the sign-in form itself is tested once), and what a page reports: CSP
// violations, console errors, uncaught exceptions. Screenshots go to docs/console/ (viewport only,
// device scale 1, so the PNGs stay small).
import assert from 'node:assert/strict'
import path from 'node:path'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { launchChromium } from './browser.ts'
import { signIn } from './console-session.ts'
import type { FlagsAccount } from './flags.ts'
import { findAccountByKey, setPlan } from '../../src/platform/accounts.ts'
import { startSystem, type TestSystem } from './system.ts'
import type { Plan, Service } from '../../src/platform/plans.ts'

export const DESKTOP = { width: 1280, height: 800 }
export const PHONE = { width: 390, height: 844 }
/** docs/console/ (CONSOLE_SCREENSHOT_DIR elsewhere, e.g. to keep a checkout unchanged). */
export const SHOTS = process.env.CONSOLE_SCREENSHOT_DIR ?? path.resolve(import.meta.dirname, '../../docs/console')

export interface ConsoleRig {
  sys: TestSystem
  browser: Browser
  /** http://127.0.0.1:PORT of the flags service (the console is at /). */
  root: string
  stop(): Promise<void>
}

/** One service with its console, and one Chromium for the test file. */
export async function startServiceConsole(service: Service, opts: { workers?: boolean; env?: Record<string, string> } = {}): Promise<ConsoleRig> {
  const sys = await startSystem({ services: [service], workers: opts.workers ?? false, env: { TRUST_PROXY: 'true', ...opts.env } })
  const root = sys.root[service]!
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

/** The flags service's console. */
export const startConsole = (opts: { workers?: boolean; env?: Record<string, string> } = {}) => startServiceConsole('flags', opts)

export interface ConsolePage {
  context: BrowserContext
  page: Page
  /** Console errors and uncaught exceptions of the page (CSP reports included). */
  errors: string[]
}

/** A browser context on the flags console; signed in with `account`'s API key when given. */
export const openConsole = (rig: ConsoleRig, account: FlagsAccount | null, viewport = DESKTOP, base = rig.root) => openConsoleWithKey(rig, account?.apiKey ?? null, viewport, base)

/** A browser context on a console, signed in with `apiKey` (a session cookie made through the API) when given. */
export async function openConsoleWithKey(rig: ConsoleRig, apiKey: string | null, viewport = DESKTOP, base = rig.root): Promise<ConsolePage> {
  const context = await rig.browser.newContext({ viewport, deviceScaleFactor: 1, baseURL: base, reducedMotion: 'reduce', acceptDownloads: true })
  if (apiKey) {
    const s = await signIn(rig.root, apiKey)
    const [name, value] = s.cookie.split('=') as [string, string]
    await context.addCookies([{ name, value, url: base, httpOnly: true, sameSite: 'Strict' }])
  }
  // Violations are counted by the page itself, as a browser reports them to scripts.
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

/** What the page saw blocked by its Content Security Policy so far. */
export async function cspViolations(page: Page): Promise<string[]> {
  return page.evaluate(() => (window as any).__csp ?? [])
}

/** Opens a console path and waits for its screen's heading. */
export async function visit(page: Page, url: string, heading: string | RegExp): Promise<void> {
  await page.goto(url)
  await page.getByRole('heading', { level: 1, name: heading }).waitFor()
}

export async function shot(page: Page, name: string, top = true): Promise<void> {
  if (top) await page.evaluate(() => window.scrollTo(0, 0))
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`), animations: 'disabled', caret: 'hide' })
}

const NAMES = ['ann', 'ben', 'cho', 'dev', 'eva', 'fay', 'gus', 'hal']
let made = 0
/** An account on `plan` with a readable e-mail (it shows in the screenshots); each test file has its own database. */
export async function consoleAccount(rig: ConsoleRig, plan: Plan = 'pro'): Promise<FlagsAccount> {
  const n = made++
  const email = `${NAMES[n % NAMES.length]}${n >= NAMES.length ? n : ''}@example.com`
  const r = await fetch(`${rig.root}/api/v1/signup`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email }) })
  const body = (await r.json()) as any
  if (r.status !== 201) throw new Error(`signup failed: ${r.status} ${JSON.stringify(body)}`)
  const acc = (await findAccountByKey(rig.sys.platform.db, 'flags', body.api_key))!
  if (plan !== 'free') await setPlan(rig.sys.platform.db, acc._id, plan)
  const projectId = body.project.id as string
  return { apiKey: body.api_key, sdkKey: body.sdk_key, projectId, accountId: acc._id, project: `${rig.root}/api/v1/projects/${projectId}` }
}

/** Management API call with the account's key (changes made "elsewhere", not in the browser). */
export async function apiCall(a: FlagsAccount, method: string, pathAndQuery: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; json: any; etag: string | null }> {
  const r = await fetch(`${a.project}${pathAndQuery}`, {
    method,
    headers: { authorization: `Bearer ${a.apiKey}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const text = await r.text()
  return { status: r.status, json: text ? JSON.parse(text) : null, etag: r.headers.get('etag') }
}

/** Console errors of a page other than the browser's note of a 4xx answer (the refusals a test provokes). */
export const pageErrors = (cp: ConsolePage) => cp.errors.filter((e) => !/Failed to load resource: the server responded with a status of 4\d\d/.test(e))

/** Waits until the focused element matches `selector`. */
export const focusOn = (page: Page, selector: string) => page.waitForFunction((s) => document.activeElement?.matches(s) ?? false, selector, { timeout: 5_000 })

/** Presses Tab (Shift+Tab when `back`) until the focused element matches `selector`; every stop must show a visible focus ring. */
export async function tabToSelector(page: Page, selector: string, opts: { max?: number; back?: boolean } = {}): Promise<void> {
  for (let i = 0; i < (opts.max ?? 120); i++) {
    await page.keyboard.press(opts.back ? 'Shift+Tab' : 'Tab')
    const f = await page.evaluate((sel) => {
      const e = document.activeElement as HTMLElement | null
      if (!e || e === document.body) return { at: false, ring: true, what: 'body' }
      const cs = getComputedStyle(e)
      const ring = cs.outlineStyle !== 'none' && parseFloat(cs.outlineWidth) >= 2
      return { at: e.matches(sel), ring, what: `${e.tagName.toLowerCase()}#${e.id} ${(e.textContent ?? '').trim().slice(0, 30)}` }
    }, selector)
    assert.ok(f.ring, `no visible focus on ${f.what}`)
    if (f.at) return
  }
  assert.fail(`${selector} not reached with Tab`)
}

/** The focused element as `tag#id:its label or text` (the first 60 characters). */
export const focusedElement = (page: Page): Promise<string> =>
  page.evaluate(() => {
    const e = document.activeElement as HTMLElement | null
    return e ? `${e.tagName.toLowerCase()}${e.id ? '#' + e.id : ''}:${(e.getAttribute('aria-label') ?? e.textContent ?? '').trim().slice(0, 60)}` : ''
  })

/** Presses Tab until focusedElement matches `want`. */
export async function tabUntil(page: Page, want: RegExp, max = 120): Promise<void> {
  for (let i = 0; i < max; i++) {
    await page.keyboard.press('Tab')
    if (want.test(await focusedElement(page))) return
  }
  throw new Error(`Tab never reached ${want}; last ${await focusedElement(page)}`)
}
