// Flags console search benchmark (docs/console.md, "Flags list"): a project of 1,000 flags open in
// the console in Chromium; the search field is typed into key by key (real key events), and for
// each keystroke the page itself measures, with the Performance API, the time from the key event
// to the list's DOM being updated, and to the next frame after it. Reference, measured in the same
// page: the same filtering as a plain Array.filter over the 1,000 keys. Target: ≤ 50 ms per
// keystroke (the updated DOM, p95). Also: the first screen usable (navigation → the list with its
// counts) on a warm server, target ≤ 1 s.
//
//   npx tsx scripts/bench/console-search.ts [--flags 1000] [--rounds 3] [--no-write]
import type { AddressInfo } from 'node:net'
import os from 'node:os'
import { parseArgs } from 'node:util'
import { chromium } from 'playwright-core'
import { ALL_INDEXES } from '../../src/collections.ts'
import { flagsService } from '../../src/flags/service.ts'
import { createAccount, setPlan } from '../../src/platform/accounts.ts'
import { loadConfig } from '../../src/platform/config.ts'
import { createPlatform } from '../../src/platform/platform.ts'
import { listen } from '../../src/serve.ts'
import { benchPort, benchStores } from './lib/bench-env.ts'
import { writeBenchSection } from './lib/report.ts'

const { values } = parseArgs({
  options: { flags: { type: 'string', default: '1000' }, rounds: { type: 'string', default: '3' }, 'no-write': { type: 'boolean', default: false } },
})
const COUNT = Number(values.flags)
const N = COUNT.toLocaleString('en-US')
const ROUNDS = Number(values.rounds)
const SECTION = '## Flags console search'
const TARGET_MS = 50
/** Typed one key at a time, then erased with Backspace: each step changes the list. */
const WORDS = ['checkout-new', 'search-ranking', 'billing-7', 'profile-dark', 'admin']
const AREAS = ['checkout', 'search', 'billing', 'profile', 'admin', 'mobile', 'api', 'growth']
const FEATURES = ['new', 'ranking', 'dark', 'beta', 'limit', 'banner', 'retry', 'export', 'v2', 'flow']

const stops: Array<() => Promise<void>> = []
const { redisUrl, mongoUrl } = await benchStores(stops, {})
const config = loadConfig({ ...process.env, LOG_LEVEL: 'silent', MONGO_DB: `bench_console_${Date.now()}`, QUEUE_PREFIX: `bc${Date.now()}` })
const platform = await createPlatform({ config, redisUrl, mongoUrl, indexes: ALL_INDEXES })
const server = await listen(platform, flagsService, await benchPort())
const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
const { account, apiKey } = await createAccount(platform.db, 'flags', `bench-console-${Date.now()}@example.com`)
await setPlan(platform.db, account._id, 'business')
const headers = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' }
const project = (await (await fetch(`${base}/api/v1/projects`, { method: 'POST', headers, body: JSON.stringify({ name: 'Bench' }) })).json()) as { id: string }

console.log(`creating ${COUNT} flags…`)
let made = 0
await Promise.all(
  Array.from({ length: 8 }, async () => {
    while (made < COUNT) {
      const i = made++
      const key = `${AREAS[i % AREAS.length]}-${FEATURES[Math.floor(i / AREAS.length) % FEATURES.length]}-${i}`
      const r = await fetch(`${base}/api/v1/projects/${project.id}/flags`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ key, name: key.replace(/-/g, ' '), type: i % 3 ? 'boolean' : 'string', default_value: i % 3 ? false : 'a', enabled: i % 2 === 0, tags: [AREAS[i % AREAS.length]] }),
      })
      if (r.status !== 201) throw new Error(`flag ${key}: ${r.status} ${await r.text()}`)
    }
  }),
)
const session = await fetch(`${base}/api/v1/console/session`, { method: 'POST', headers, body: JSON.stringify({ api_key: apiKey }) })
const cookie = /qw_console=([^;]*)/.exec(session.headers.get('set-cookie') ?? '')?.[1]
if (!cookie) throw new Error(`no session: ${session.status}`)

const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--headless', '--disable-gpu', '--disable-background-networking', '--no-first-run'] })
const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, baseURL: base })
await context.addCookies([{ name: 'qw_console', value: cookie, url: base }])
// First screen usable: from the navigation's start (performance.timeOrigin) to the list showing
// its counts, on a warm server (the first load builds nothing: it is measured as the second).
await context.addInitScript(() => {
  new MutationObserver((_, mo) => {
    const c = document.getElementById('flag-counts')
    if (c && / of /.test(c.textContent ?? '')) {
      ;(window as any).__usable = performance.now()
      mo.disconnect()
    }
  }).observe(document, { childList: true, subtree: true, characterData: true })
})
const page = await context.newPage()
const usable: number[] = []
for (let i = 0; i < 4; i++) {
  await page.goto(`/projects/${project.id}`)
  await page.getByText(`${COUNT} of ${COUNT} flags`).waitFor({ timeout: 60_000 })
  if (i > 0) usable.push(await page.evaluate(() => (window as any).__usable as number))
}

// In the page: each keydown starts a clock (the event's own timestamp); the first DOM change of
// the list after it (rows, counts, or the list's data-query, which says which search it shows,
// so a keystroke that leaves the same rows is measured too) stops the "updated" clock, the next
// animation frame the "frame" clock.
await page.evaluate(() => {
  const w = window as any
  w.__samples = []
  const input = document.getElementById('flag-search')!
  const watched = document.querySelector('main')!
  let t0 = 0
  let pending = false
  input.addEventListener('keydown', (e) => {
    t0 = e.timeStamp
    pending = true
  })
  new MutationObserver(() => {
    if (!pending) return
    pending = false
    const dom = performance.now() - t0
    requestAnimationFrame(() => w.__samples.push({ dom, frame: performance.now() - t0 }))
  }).observe(watched, { childList: true, subtree: true, characterData: true, attributes: true, attributeFilter: ['data-query'] })
})

const samples: Array<{ dom: number; frame: number }> = []
for (let round = 0; round < ROUNDS; round++) {
  for (const word of WORDS) {
    await page.locator('#flag-search').focus()
    const steps = [...word.split(''), ...word.split('').map(() => 'Backspace')]
    for (const key of steps) {
      const before = await page.evaluate(() => (window as any).__samples.length)
      await page.keyboard.press(key)
      await page.waitForFunction((n) => (window as any).__samples.length > n, before, { timeout: 5_000 })
    }
  }
}
samples.push(...(await page.evaluate(() => (window as any).__samples)))

// Reference: the same search as a plain Array.filter over the keys, names and tags, in the page.
const ref = await page.evaluate(
  async ({ words, count, areas, features }) => {
    const rows = Array.from({ length: count }, (_, i) => {
      const key = `${areas[i % areas.length]}-${features[Math.floor(i / areas.length) % features.length]}-${i}`
      return { key, hay: `${key}\n${key.replace(/-/g, ' ')}\n${areas[i % areas.length]}`.toLowerCase() }
    })
    const times: number[] = []
    for (const w of words) for (let n = 1; n <= w.length; n++) {
      const q = w.slice(0, n)
      const t0 = performance.now()
      for (let k = 0; k < 100; k++) rows.filter((r) => r.hay.includes(q))
      times.push((performance.now() - t0) / 100)
    }
    return times
  },
  { words: WORDS, count: COUNT, areas: AREAS, features: FEATURES },
)
await browser.close()
server.close()
await platform.close()
for (const s of stops) await s()

const q = (xs: number[], p: number) => {
  const s = xs.slice().sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor(p * s.length))]!
}
const dom = samples.map((s) => s.dom)
const frame = samples.map((s) => s.frame)
const f1 = (n: number) => n.toFixed(1)
const f3 = (n: number) => n.toFixed(3)
const f0 = (n: number) => n.toFixed(0)
const load = os.loadavg()[0]!.toFixed(2)
const date = new Date().toISOString().slice(0, 10)
const met = q(dom, 0.95) <= TARGET_MS
const lines = [
  `keystrokes measured: ${samples.length} (${ROUNDS} rounds of ${WORDS.length} words typed and erased) over ${COUNT} flags`,
  `keystroke → list updated (DOM):  p50 ${f1(q(dom, 0.5))} ms  p95 ${f1(q(dom, 0.95))} ms  max ${f1(Math.max(...dom))} ms`,
  `keystroke → next frame:          p50 ${f1(q(frame, 0.5))} ms  p95 ${f1(q(frame, 0.95))} ms  max ${f1(Math.max(...frame))} ms`,
  `reference, Array.filter of ${COUNT} rows in the page: p50 ${f3(q(ref, 0.5))} ms  max ${f3(Math.max(...ref))} ms`,
  `target ≤ ${TARGET_MS} ms (DOM, p95): ${met ? 'met' : 'missed'}  (load ${load}, ${os.cpus().length} cores)`,
  `first screen usable (navigation → list of ${COUNT} with its counts), warm: ${usable.map((u) => f0(u)).join(' / ')} ms (target ≤ 1,000 ms: ${Math.max(...usable) <= 1000 ? 'met' : 'missed'})`,
]
console.log(lines.join('\n'))
if (!values['no-write'])
  writeBenchSection(`${SECTION}

\`npx tsx scripts/bench/console-search.ts\`, ${date}, load average ${load} (1 min),
Chromium 1280×800. A project of ${N} flags open in the console's flags list; the search field
is typed into with real key events, one key at a time (${WORDS.length} words typed then erased, ${ROUNDS} rounds);
the page measures with the Performance API from each key event's timestamp to the first change of
the list's DOM, and to the next animation frame after it. The reference is the same search as a
plain \`Array.filter\` over ${N} rows in the same page.

| measure | p50 | p95 | max |
|---|---|---|---|
| keystroke → list updated (DOM) | ${f1(q(dom, 0.5))} ms | ${f1(q(dom, 0.95))} ms | ${f1(Math.max(...dom))} ms |
| keystroke → next frame | ${f1(q(frame, 0.5))} ms | ${f1(q(frame, 0.95))} ms | ${f1(Math.max(...frame))} ms |
| reference: \`Array.filter\` over ${N} rows | ${f3(q(ref, 0.5))} ms | | ${f3(Math.max(...ref))} ms |

First screen usable on a warm server (from the navigation's start to the list of ${N} flags showing
its counts, three loads after a first): ${usable.map((u) => `${f0(u)} ms`).join(', ')} (target ≤ 1,000 ms:
${Math.max(...usable) <= 1000 ? 'met' : 'missed'}).

Target ≤ ${TARGET_MS} ms per keystroke (DOM updated, p95): **${met ? 'met' : 'missed'}**. Why it is cheap: rows are
prepared once per load (lower-cased text to search), a keystroke is one pass over them, and at most
100 rows are drawn (“Show 100 more” draws the next ones).
`)
process.exit(0)
