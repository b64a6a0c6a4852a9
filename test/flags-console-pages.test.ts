// The flags console served by the flags service itself: the page at / and at every deep link, its
// bundle at /console/assets/ (content-hashed, long cache, only files the build wrote), the strict
// CSP and headers on each, the API's JSON 404s unchanged, and the bundle built with esbuild from
// Preact JSX when missing and again when a source changes.
import assert from 'node:assert/strict'
import { existsSync, mkdtempSync, mkdirSync, readFileSync, writeFileSync, utimesSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { ConsoleBundle } from '../src/platform/http/console-build.ts'
import { CONSOLE_CSP, consolePages } from '../src/platform/http/console-pages.ts'
import { assertJsonError, call, get } from './helpers/http.ts'
import { startSystem, type TestSystem } from './helpers/system.ts'

const EXPECTED_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

describe('flags console: pages and assets', () => {
  let sys: TestSystem
  let root: string

  before(async () => {
    sys = await startSystem({ services: ['flags'], workers: false })
    root = sys.root.flags!
  })
  after(async () => {
    await sys?.stop()
  })

  const assertConsoleHeaders = (r: { headers: Headers }) => {
    assert.equal(r.headers.get('content-security-policy'), EXPECTED_CSP)
    assert.equal(r.headers.get('x-content-type-options'), 'nosniff')
    assert.equal(r.headers.get('referrer-policy'), 'no-referrer')
  }

  it('serves the page at / and at deep links, with the strict CSP, no inline script or style', async () => {
    assert.equal(CONSOLE_CSP, EXPECTED_CSP)
    for (const p of ['/', '/projects', '/projects/abc', '/projects/abc/flags/new-checkout', '/projects/abc/playground', '/sign-in', '/account']) {
      const r = await get(`${root}${p}`)
      assert.equal(r.status, 200, `${p}: ${r.text}`)
      assert.match(r.headers.get('content-type') ?? '', /^text\/html/)
      assertConsoleHeaders(r)
      assert.equal(r.headers.get('cache-control'), 'no-cache')
      assert.match(r.text, /<div id="app"><\/div>/)
      assert.doesNotMatch(r.text, /<script>|<script(?![^>]*\bsrc=)[^>]*>|<style|style=/, 'no inline script or style')
    }
  })

  it('serves the bundle the page names, content-hashed with a long cache; nothing else under /console/assets/', async () => {
    const page = await get(`${root}/`)
    const src = /<script type="module" src="(\/console\/assets\/[^"]+\.js)"/.exec(page.text)?.[1]
    assert.ok(src, page.text)
    const js = await get(`${root}${src}`)
    assert.equal(js.status, 200)
    assert.match(js.headers.get('content-type') ?? '', /^text\/javascript/)
    assert.equal(js.headers.get('cache-control'), 'public, max-age=31536000, immutable')
    assertConsoleHeaders(js)
    assert.ok(js.body.length > 0)
    const css = /<link rel="stylesheet" href="(\/console\/assets\/[^"]+\.css)"/.exec(page.text)?.[1]
    if (css) assert.match((await get(`${root}${css}`)).headers.get('content-type') ?? '', /^text\/css/)

    for (const p of ['/console/assets/nope-ABC.js', '/console/assets/manifest.json', '/console/assets/..%2F..%2Fpackage.json', '/console/assets/%2e%2e/%2e%2e/package.json', '/console/assets/']) {
      assertJsonError(await get(`${root}${p}`), 404)
    }
  })

  it('leaves the API and unknown paths as they were: JSON 404s, no page; not in /openapi.json', async () => {
    assertJsonError(await get(`${root}/api/v1/nothing`), 404, undefined, { exact: true })
    assertJsonError(await get(`${root}/project`), 404)
    assertJsonError(await get(`${root}/projectsx`), 404)
    const post = await call('POST', `${root}/projects`, { json: {} })
    assert.notEqual(post.status, 200)
    assert.ok(post.json?.error, post.text)
    const spec = (await get(`${root}/openapi.json`)).json
    assert.ok(!Object.keys(spec.paths).some((p: string) => p === '/' || p.startsWith('/projects') || p.startsWith('/console')))
  })

  it('a source that does not compile fails the build (the page answers a 500 saying so), and the next good one builds', async function () {
    this.timeout(60_000)
    const dir = mkdtempSync(path.join(os.tmpdir(), 'console-src-'))
    const out = mkdtempSync(path.join(os.tmpdir(), 'console-out-'))
    try {
      mkdirSync(path.join(dir, 'demo'))
      const main = path.join(dir, 'demo', 'main.tsx')
      writeFileSync(main, 'render(<p>unclosed, document.body)\n')
      const pages = consolePages({ name: 'demo', title: 'Demo', paths: [], sourceDir: dir, outDir: out })
      const ctx: any = { method: 'GET', path: '/', set() {} }
      await assert.rejects(() => pages(ctx, async () => {}), (err: any) => err.status === 500 && /could not be built/.test(err.message))
      writeFileSync(main, "document.body.textContent = 'fixed'\n")
      utimesSync(main, new Date(Date.now() + 5_000), new Date(Date.now() + 5_000))
      const m = await pages.bundle.current()
      assert.match(readFileSync(path.join(out, m.js), 'utf8'), /fixed/)
    } finally {
      rmSync(dir, { recursive: true, force: true })
      rmSync(out, { recursive: true, force: true })
    }
  })

  it('builds Preact JSX (and its CSS) with esbuild, and again when a source changes', async function () {
    this.timeout(60_000)
    const dir = mkdtempSync(path.join(os.tmpdir(), 'console-src-'))
    const out = mkdtempSync(path.join(os.tmpdir(), 'console-out-'))
    try {
      mkdirSync(path.join(dir, 'demo'))
      const main = path.join(dir, 'demo', 'main.tsx')
      writeFileSync(path.join(dir, 'demo', 'look.css'), '.hello { color: rgb(1, 2, 3) }\n')
      writeFileSync(main, "import { render } from 'preact'\nimport './look.css'\nrender(<p class=\"hello\">first version</p>, document.getElementById('app')!)\n")
      // A bundle taken from the real node_modules: esbuild resolves preact from the repository.
      const bundle = new ConsoleBundle({ name: 'demo', sourceDir: dir, outDir: out, recheckMs: 0 })
      const first = await bundle.current()
      assert.equal(first.placeholder, false)
      assert.match(first.js, /^main-[A-Z0-9]+\.js$/)
      assert.ok(first.css && /\.css$/.test(first.css))
      const js = readFileSync(path.join(out, first.js), 'utf8')
      assert.match(js, /first version/)
      assert.doesNotMatch(js, /React\.createElement|jsxDEV/)
      assert.match(readFileSync(path.join(out, first.css!), 'utf8'), /rgb\(1,\s?2,\s?3\)|#010203/)
      // Unchanged sources: the same manifest, no build.
      assert.equal((await bundle.current()).built_at, first.built_at)
      writeFileSync(main, readFileSync(main, 'utf8').replace('first version', 'second version'))
      const later = new Date(Date.now() + 5_000)
      utimesSync(main, later, later)
      const second = await bundle.current()
      assert.notEqual(second.js, first.js)
      assert.match(readFileSync(path.join(out, second.js), 'utf8'), /second version/)
      // A fresh process finds the manifest on disk and builds nothing.
      const again = await new ConsoleBundle({ name: 'demo', sourceDir: dir, outDir: out }).current()
      assert.equal(again.built_at, second.built_at)
      // An earlier build's files stay an hour (pages loaded before still ask for them), then go.
      assert.ok(existsSync(path.join(out, first.js)))
      const old = new Date(Date.now() - 2 * 3600_000)
      utimesSync(path.join(out, first.js), old, old)
      writeFileSync(main, readFileSync(main, 'utf8').replace('second version', 'third version'))
      utimesSync(main, new Date(Date.now() + 10_000), new Date(Date.now() + 10_000))
      const third = await bundle.current()
      assert.ok(!existsSync(path.join(out, first.js)), 'pruned')
      assert.ok(existsSync(path.join(out, second.js)), 'a recent one is kept')
      assert.ok(existsSync(path.join(out, third.js)))
    } finally {
      rmSync(dir, { recursive: true, force: true })
      rmSync(out, { recursive: true, force: true })
    }
  })
})
