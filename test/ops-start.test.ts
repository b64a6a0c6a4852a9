// `start` as a terminal or a supervisor runs it: SIGTERM to its whole process group drains the
// services while the embedded redis-server and MongoDB engine keep serving them, stops those last,
// exits 0 and leaves no process behind; SIGKILL to the parent alone still takes every child down.
import assert from 'node:assert/strict'
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePorts } from './helpers/ports.ts'
import Stripe from 'stripe'
import { waitForExit } from './helpers/system.ts'
import { get, post } from './helpers/http.ts'
import { startCpuHog } from './helpers/cpu-hog.ts'

interface Proc {
  pid: number
  ppid: number
  name: string
}

/** Live processes (zombies count as gone) from /proc. */
function processes(): Proc[] {
  const out: Proc[] = []
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8')
      // "pid (comm) state ppid …": comm may contain spaces and parentheses.
      const close = stat.lastIndexOf(')')
      const [state, ppid] = stat.slice(close + 2).split(' ')
      if (state === 'Z' || state === 'X') continue
      out.push({ pid: Number(d), ppid: Number(ppid), name: stat.slice(stat.indexOf('(') + 1, close) })
    } catch {
      /* exited while we looked */
    }
  }
  return out
}

function descendants(root: number): Proc[] {
  const all = processes()
  const found: Proc[] = []
  const walk = (pid: number) => {
    for (const p of all.filter((x) => x.ppid === pid)) {
      found.push(p)
      walk(p.pid)
    }
  }
  walk(root)
  return found
}

const alive = (pids: number[]) => {
  const live = new Set(processes().map((p) => p.pid))
  return pids.filter((p) => live.has(p))
}

/** SIGKILL what a failed test may have left: the start's process tree and the start itself. */
function killLeftovers(tree: number[], proc: ChildProcess | undefined): void {
  for (const pid of [...alive(tree), ...(proc?.pid ? [proc.pid] : [])]) {
    try {
      process.kill(pid, 'SIGKILL')
    } catch {
      /* gone */
    }
  }
}

async function until<T>(what: string, fn: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs = 90_000): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const v = await fn()
    if (v) return v
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

/** `main.ts start` in a process group of its own (as a shell runs a job), on free ports. */
async function startAll(extraEnv: NodeJS.ProcessEnv = {}): Promise<{ proc: ChildProcess; output: () => string; invoice: string; root: string[] }> {
  const [invoice, flags, webhooks] = await freePorts(3)
  // A data folder of its own: each start begins empty (no lease or data left by another run).
  const dataDir = mkdtempSync(join(tmpdir(), 'qw-start-'))
  const env: NodeJS.ProcessEnv = { ...process.env, INVOICE_PORT: String(invoice), FLAGS_PORT: String(flags), WEBHOOKS_PORT: String(webhooks), LOG_LEVEL: 'info', NODE_ENV: 'development', DATA_DIR: dataDir, ...extraEnv }
  for (const k of ['REDIS_URL', 'MONGO_URL', 'STRIPE_SECRET_KEY', 'STRIPE_WEBHOOK_SECRET', 'STRIPE_API_BASE']) delete env[k]
  const proc = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'start'], { env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] })
  let text = ''
  proc.stdout!.on('data', (b) => (text += b))
  proc.stderr!.on('data', (b) => (text += b))
  await until('start to be up', () => /Press Ctrl-C to stop/.test(text) || proc.exitCode !== null)
  assert.equal(proc.exitCode, null, text)
  const root = [invoice, flags, webhooks].map((p) => `http://127.0.0.1:${p}`)
  return { proc, output: () => text, invoice: `${root[0]}/api/v1`, root }
}

describe('ops: stopping `start`', function () {
  this.timeout(240_000)
  let proc: ChildProcess | undefined
  let tree: number[] = []
  // Whatever a failed test left running.
  afterEach(() => killLeftovers(tree, proc))

  it('SIGTERM to the process group: services drain against live redis/MongoDB, exit 0, nothing left running', async () => {
    const s = await startAll()
    proc = s.proc
    const signup = await post(`${s.invoice}/signup`, { email: 'start-stop@example.com' })
    assert.equal(signup.status, 200, signup.text)
    const children = descendants(proc.pid!)
    tree = children.map((p) => p.pid)
    for (const name of ['redis-server', 'jongodb']) assert.ok(children.some((p) => p.name.startsWith(name)), `${name} runs: ${JSON.stringify(children)}`)

    const exited = waitForExit(proc)
    process.kill(-proc.pid!, 'SIGTERM')
    const code = await exited
    const out = s.output()
    assert.equal(code, 0, out)
    assert.doesNotMatch(out, /ECONNREFUSED/)
    assert.doesNotMatch(out, /shutdown took too long|shutdown failed/)
    await until('every child process to be gone', () => alive(tree).length === 0 || undefined, 15_000).catch(() => {
      throw new Error(`still running: ${JSON.stringify(processes().filter((p) => tree.includes(p.pid)))}`)
    })
  })

  it('exports queue depth once for the whole system by default, and prints the Stripe simulator address and key the stripe client can use', async () => {
    const s = await startAll()
    proc = s.proc
    tree = descendants(proc.pid!).map((p) => p.pid)
    // Every API of `start` lives in the one process: its /metrics (on any port) has the gauges.
    const metrics = (await get(`${s.root[0]}/metrics`)).text
    for (const state of ['waiting', 'active', 'delayed', 'failed']) assert.match(metrics, new RegExp(`^queue_jobs\\{queue="invoice-render",state="${state}"\\} \\d+$`, 'm'))
    assert.match(metrics, /^queue_jobs\{queue="capture-forward",state="waiting"\} \d+$/m)

    const address = /^ {2}stripe +(http:\/\/\S+) /m.exec(s.output())?.[1]
    const key = /^ +secret key (sk_test_\w+)$/m.exec(s.output())?.[1]
    assert.ok(address && key, s.output())
    const u = new URL(address)
    const stripe = new Stripe(key, { host: u.hostname, port: u.port, protocol: 'http', maxNetworkRetries: 0 })
    const session = await stripe.checkout.sessions.create({
      mode: 'payment',
      line_items: [{ quantity: 1, price_data: { currency: 'usd', unit_amount: 500, product_data: { name: 'Printed key' } } }],
      success_url: 'http://127.0.0.1:1/ok',
    })
    assert.equal((await stripe.checkout.sessions.retrieve(session.id)).amount_total, 500)
    const exited = waitForExit(proc)
    process.kill(-proc.pid!, 'SIGTERM')
    assert.equal(await exited, 0, s.output())
  })

  it('SIGKILL to the parent alone: the embedded services and workers still stop', async () => {
    const s = await startAll()
    proc = s.proc
    const children = descendants(proc.pid!)
    tree = children.map((p) => p.pid)
    assert.ok(children.some((p) => p.name.startsWith('redis-server')), JSON.stringify(children))

    const exited = waitForExit(proc)
    proc.kill('SIGKILL')
    await exited
    await until('every child process to be gone', () => alive(tree).length === 0 || undefined, 30_000).catch(() => {
      throw new Error(`still running: ${JSON.stringify(processes().filter((p) => tree.includes(p.pid)))}`)
    })
  })
})

describe('ops: starting `start`', function () {
  this.timeout(300_000)
  let proc: ChildProcess | undefined
  let tree: number[] = []
  afterEach(() => killLeftovers(tree, proc))

  const NO_WORKER = 'No worker is consuming invoice-render yet (the workers are starting, or none is running). Please retry in a few seconds; this request was not counted.'

  /**
   * Ask for an invoice (and /readyz) from the banner on until one is served: before the "ready"
   * line only 503 + Retry-After naming the queue, after it the first request is served; the log
   * up to then has no error-level line (/readyz polled throughout, as a load balancer does).
   */
  async function startTellsTheTruth(): Promise<void> {
    const s = await startAll()
    proc = s.proc
    tree = descendants(proc.pid!).map((p) => p.pid)
    const signup = await post(`${s.invoice}/signup`, { email: 'first-light@example.com' })
    assert.equal(signup.status, 200, signup.text)
    const key = signup.json.api_key as string
    const seen: { status: number; afterReadyLine: boolean }[] = []
    await until('an invoice to be served', async () => {
      const afterReadyLine = /queueworks is ready: invoices are served end to end/.test(s.output())
      const probe = await get(`${s.root[0]}/readyz`)
      const r = await post(`${s.invoice}/invoice`, { items: [{ description: 'First light', quantity: 1, unit_price: 10 }] }, { key })
      seen.push({ status: r.status, afterReadyLine })
      if (r.status === 503) {
        assert.deepEqual(r.json, { error: NO_WORKER })
        assert.equal(r.headers.get('retry-after'), '3')
        if (!afterReadyLine && probe.status === 200) assert.fail('/readyz said 200 while invoices were refused')
      }
      return r.status === 200 && r.headers.get('content-type') === 'application/pdf'
    }, 240_000)
    assert.deepEqual(seen.filter((x) => x.status !== 503 && x.status !== 200), [], 'only refused or served')
    assert.deepEqual(seen.filter((x) => x.afterReadyLine && x.status !== 200), [], 'nothing refused once the ready line was printed')
    await until('the ready line', () => /queueworks is ready: invoices are served end to end \(\d+\.\d s after start\)/.test(s.output()), 30_000)
    const usage = await get(`${s.invoice}/usage`, { key })
    assert.equal(usage.json.invoices_this_month, 1)
    const errors = s.output().split('\n').filter((l) => /"level":(50|60)/.test(l))
    assert.deepEqual(errors, [], 'no error-level line during the start')
    const exited = waitForExit(proc)
    process.kill(-proc.pid!, 'SIGTERM')
    await exited
  }

  it('says when it serves: 503 + Retry-After until "queueworks is ready", then served; /readyz agrees; no error-level line', async () => {
    await startTellsTheTruth()
  })

  it('the same with the CPU saturated by another process', async () => {
    const hog = startCpuHog()
    try {
      await startTellsTheTruth()
    } finally {
      await hog.stop()
    }
  })
})
