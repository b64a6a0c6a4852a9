// Every runnable shell example of README.md and docs/*.md runs as pasted: each page's `sh`/`bash`
// blocks, in page order, in one bash shell, against one system started the README's way
// (`start --ephemeral` on the documented ports 3001–3003). A failing block names its page, line
// and output. The first describe shows the runner itself can fail (docs/testing.md, "Docs examples").
import assert from 'node:assert/strict'
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { connect } from 'node:net'
import { join } from 'node:path'
import { runnableBlocks, runPage, type ShellBlock } from './helpers/docs-blocks.ts'
import { waitForExit } from './helpers/system.ts'

const ROOT = process.cwd()
// DOCS_PAGES=README.md,docs/flags.md runs just those pages (while editing them).
const ALL_PAGES = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`)]
const PAGES = process.env.DOCS_PAGES ? ALL_PAGES.filter((p) => process.env.DOCS_PAGES!.split(',').includes(p)) : ALL_PAGES
const PORTS = [3001, 3002, 3003]

/** A working directory inside the clone (gitignored `.tmp/`), as a reader's terminal in it: files the examples write land there, `npm run` finds the package. */
function workDir(name: string): string {
  mkdirSync(join(ROOT, '.tmp'), { recursive: true })
  return mkdtempSync(join(ROOT, '.tmp', `${name}-`))
}

/** The shell environment of a reader: no test variables; curl fails on HTTP errors (4xx/5xx) so an example answered with an error fails its block. */
function readerEnv(curlHome: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {}
  for (const k of ['PATH', 'HOME', 'LANG', 'TERM', 'TMPDIR', 'USER']) if (process.env[k] !== undefined) env[k] = process.env[k]
  // `npm test` puts the package's bins on PATH; a reader's terminal does not have them.
  env.PATH = (env.PATH ?? '').split(':').filter((d) => !d.includes('node_modules/.bin')).join(':')
  writeFileSync(join(curlHome, '.curlrc'), 'fail-with-body\nshow-error\n')
  env.CURL_HOME = curlHome
  return env
}

function failure(page: string, blocks: ShellBlock[], run: Awaited<ReturnType<typeof runPage>>): string {
  const f = run.failed!
  const i = blocks.findIndex((b) => b.line === f.line)
  return `${page}:${f.line}: block ${i + 1} of ${blocks.length} failed (${f.reason}):\n${f.output.trimEnd() || '(no output)'}`
}

describe('docs examples: the block extraction and the page runner', () => {
  let dir: string
  before(() => (dir = workDir('docs-runner')))
  after(() => rmSync(dir, { recursive: true, force: true }))

  const page = [
    '# A page',
    '',
    '```sh',
    'A=one',
    '```',
    '',
    '- a list item with a block:',
    '  ```bash',
    '  B="$A two"',
    '  ```',
    '',
    '```sh illustration',
    'exit 7',
    '```',
    '',
    '```json',
    '{"never": "run"}',
    '```',
    '',
    '```sh',
    'echo "got $B"',
    'test "$B" = "one two"',
    '```',
  ].join('\n')

  it('finds the sh/bash blocks with their lines, skips illustrations and other languages, refuses unknown info words', () => {
    assert.deepEqual(runnableBlocks(page), [
      { line: 3, code: 'A=one' },
      { line: 8, code: 'B="$A two"' },
      { line: 20, code: 'echo "got $B"\ntest "$B" = "one two"' },
    ])
    assert.throws(() => runnableBlocks('x\n\n```sh ilustration\nls\n```\n', 'p.md'), /p\.md:3: info string "sh ilustration"/)
  })

  it('runs a page in one shell: what a block sets is there for the next', async () => {
    const run = await runPage(runnableBlocks(page), { cwd: dir, timeoutMs: 20_000 })
    assert.equal(run.ok, true, JSON.stringify(run.failed))
    assert.equal(run.outputs.get(20), 'got one two\n')
  })

  it('names the failing block of a broken page, with its output, and runs nothing after it', async () => {
    const broken = [
      'Intro.',
      '',
      '```sh',
      'echo first',
      '```',
      '',
      'Text.',
      '',
      '```sh',
      'echo "about to fail"',
      'curl -s "http://127.0.0.1:1/nowhere" | cat   # a failing stage of a pipe fails the block',
      'echo "not reached"',
      '```',
      '',
      '```sh',
      'touch reached-third',
      '```',
    ].join('\n')
    const blocks = runnableBlocks(broken)
    const run = await runPage(blocks, { cwd: dir, timeoutMs: 20_000 })
    assert.equal(run.ok, false)
    assert.equal(run.failed!.line, 9)
    assert.equal(run.failed!.reason, 'exit status 7')
    assert.equal(run.failed!.output, 'about to fail\n')
    assert.match(failure('broken.md', blocks, run), /^broken\.md:9: block 2 of 3 failed \(exit status 7\):\nabout to fail$/)
    assert.deepEqual(readdirSync(dir).filter((f) => f === 'reached-third'), [])
  })

  it('an unset variable fails its block (a value the page never set), and a block still running at the deadline is named', async () => {
    const unset = await runPage([{ line: 5, code: 'echo "batch $BATCH"' }], { cwd: dir, timeoutMs: 20_000 })
    assert.equal(unset.failed?.line, 5)
    assert.match(unset.failed!.output, /BATCH: unbound variable/)
    const slow = await runPage([{ line: 1, code: 'true' }, { line: 4, code: 'echo waiting; sleep 30' }], { cwd: dir, timeoutMs: 1_500 })
    assert.deepEqual({ line: slow.failed?.line, reason: slow.failed?.reason, output: slow.failed?.output }, { line: 4, reason: 'still running after 1500 ms', output: 'waiting\n' })
  })
})

describe('docs examples: every runnable block of README.md and docs/*.md runs as pasted', function () {
  this.timeout(150_000)
  let proc: ChildProcess | undefined
  let log = ''
  let dir: string
  let env: NodeJS.ProcessEnv

  before(async function () {
    for (const port of PORTS) {
      const taken = await new Promise<boolean>((resolve) => {
        const s = connect(port, '127.0.0.1')
        s.once('connect', () => (s.destroy(), resolve(true)))
        s.once('error', () => resolve(false))
      })
      assert.equal(taken, false, `port ${port} is in use: the docs examples need 3001–3003 free (another \`npm start\`?)`)
    }
    dir = workDir('docs-examples')
    mkdirSync(join(dir, '.curl'))
    env = readerEnv(join(dir, '.curl'))
    // The README's start (`npm start`, here with --ephemeral and a data folder of its own), with
    // none of the test run's stores: it starts its own Redis, engine and Stripe simulator.
    const startEnv: NodeJS.ProcessEnv = { ...process.env, NODE_ENV: 'development', LOG_LEVEL: 'warn', DATA_DIR: join(dir, '.queueworks-data') }
    for (const k of Object.keys(startEnv)) if (k.startsWith('TEST_') || /^(REDIS_URL|MONGO_URL|MONGO_DB|QUEUE_PREFIX|STRIPE_.*|(INVOICE|FLAGS|WEBHOOKS)_(PORT|PUBLIC_URL)|ADMIN_TOKEN|WORKER_PROCESSES)$/.test(k)) delete startEnv[k]
    proc = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'start', '--ephemeral'], { cwd: ROOT, env: startEnv, detached: true, stdio: ['ignore', 'pipe', 'pipe'] })
    proc.stdout!.on('data', (b) => (log += b))
    proc.stderr!.on('data', (b) => (log += b))
    const deadline = Date.now() + 120_000
    while (!/^queueworks is ready:/m.test(log)) {
      if (proc.exitCode !== null || Date.now() > deadline) assert.fail(`start did not print "queueworks is ready":\n${log}`)
      await new Promise((r) => setTimeout(r, 100))
    }
  })

  after(async function () {
    if (proc?.pid && proc.exitCode === null) {
      const exited = waitForExit(proc)
      process.kill(-proc.pid, 'SIGTERM')
      const t = setTimeout(() => {
        try {
          process.kill(-proc!.pid!, 'SIGKILL')
        } catch {
          /* gone */
        }
      }, 30_000)
      await exited
      clearTimeout(t)
    }
    if (dir) rmSync(dir, { recursive: true, force: true })
  })

  for (const page of PAGES) {
    const blocks = runnableBlocks(readFileSync(join(ROOT, page), 'utf8'), page)
    if (blocks.length === 0) continue
    it(`${page}: ${blocks.length} block(s)`, async () => {
      const cwd = join(dir, page.replace(/[/.]/g, '_'))
      mkdirSync(cwd)
      const run = await runPage(blocks, { cwd, env, timeoutMs: 60_000 })
      if (!run.ok) assert.fail(failure(page, blocks, run))
    })
  }
})
