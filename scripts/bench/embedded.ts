// bench:embedded — does `npm start` on the embedded engine stay fast as it fills up?
// Starts `tsx src/main.ts start` (no MONGO_URL, a fresh data folder, snapshots on as for a user)
// on bench ports (BENCH_PORT_BASE, else free ones; data folder in BENCH_DATA_DIR, else the
// temporary folder), takes the invoices' empty-store baseline, then fills it in blocks and prints
// one line per block:
//   0. the baseline, before anything is stored: BENCH_INVOICE_WARMUP invoices (default 1,000), then
//      removed, then the middle of three samples of 50 sequential single POST /invoice, each taken
//      once the system is idle;
//   1. captures: ~80-byte JSON POSTs to one endpoint at concurrency 16, BENCH_CAPTURES in all
//      (default 100,000) in blocks of BENCH_CAPTURE_BLOCK (default 10,000), after
//      BENCH_CAPTURE_WARMUP (default 2,000) to another endpoint, so the first block is warm too;
//   2. invoices: the 20-line invoice of bench:invoice, single POST /invoice at concurrency 4 up to
//      BENCH_INVOICES (default 20,000) in blocks of BENCH_INVOICE_BLOCK (default 2,000), and after
//      each block the p50 of 50 sequential single requests, taken once the system is idle again.
// The blocks are sent by the harness's load generator (lib/harness.ts: autocannon in its own
// process); a failed request is counted by status in its block's row, never the end of the run.
// BENCH_NODE_ARGS passes node flags to the started process (--cpu-prof to see where a capture's time goes);
// each row has the load average before the block, stored count, throughput, p50/p99, CPU per
// request from /proc/<pid>/stat (the engine; everything else the start runs: API, worker
// processes with their render threads, Redis) and the engine's RSS, and its ratio against the
// first block.
// Results go to docs/benchmarks.md (section "## Embedded store").
import { execSync, spawn, type ChildProcess } from 'node:child_process'
import { readFileSync, readdirSync, rmSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { MongoClient } from 'mongodb'
import { runBench } from './lib/run.ts'
import { writeBenchSection } from './lib/report.ts'
import { benchDir, benchPort } from './lib/bench-env.ts'
import { describeFailures, loadAverage, loadFailures, runLoad } from './lib/harness.ts'
import { invoice20 } from './lib/invoice-20.ts'
import { readLayout } from '../../src/platform/store/partitioned.ts'
import { treeCpuMs } from './lib/proc-cpu.ts'

const CAPTURES = Number(process.env.BENCH_CAPTURES ?? 100_000)
const CAPTURE_BLOCK = Number(process.env.BENCH_CAPTURE_BLOCK ?? 10_000)
const INVOICES = Number(process.env.BENCH_INVOICES ?? 20_000)
const INVOICE_BLOCK = Number(process.env.BENCH_INVOICE_BLOCK ?? 2_000)
// The render threads get faster over their first several hundred invoices (JIT): after 100 warm-up
// invoices the empty-store baseline read 47 ms against 22-25 ms after every later block, so every
// "vs empty" figure came out negative.
const INVOICE_WARMUP = Number(process.env.BENCH_INVOICE_WARMUP ?? 1_000)
const CAPTURE_WARMUP = Number(process.env.BENCH_CAPTURE_WARMUP ?? 2_000)
const SEQUENTIAL_SAMPLES = 50
/** Sequential samples of the empty store; the middle one is the baseline. */
const BASELINE_SAMPLES = 3
// Each block of invoices is sent with a business account of its own (10,000 invoices a month).
if (INVOICE_BLOCK + SEQUENTIAL_SAMPLES > 10_000) throw new Error('BENCH_INVOICE_BLOCK: at most 9,950')
/** Extra node flags for the started process, e.g. BENCH_NODE_ARGS='--cpu-prof --cpu-prof-dir=/tmp/prof' to profile the API. */
const API_NODE_ARGS = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean)
const TICK = 100 // clock ticks per second (USER_HZ) on Linux

interface System {
  proc: ChildProcess
  ports: { invoice: number; flags: number; webhooks: number }
  mongoUrl: string
  enginePid: number
  dir: string
}

async function startSystem(
  dir = benchDir('embedded'),
  ports = { invoice: 0, flags: 0, webhooks: 0 },
): Promise<System> {
  if (!ports.invoice) Object.assign(ports, { invoice: await benchPort(), flags: await benchPort(), webhooks: await benchPort() })
  const env = { ...process.env }
  delete env.MONGO_URL
  delete env.REDIS_URL
  const proc = spawn(process.execPath, [...API_NODE_ARGS, '--import', 'tsx', 'src/main.ts', 'start'], {
    env: {
      ...env,
      INVOICE_PORT: String(ports.invoice),
      FLAGS_PORT: String(ports.flags),
      WEBHOOKS_PORT: String(ports.webhooks),
      DATA_DIR: join(dir, 'data'),
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  let out = ''
  const mongoUrl = await new Promise<string>((resolve, reject) => {
    proc.stdout!.on('data', (b: Buffer) => {
      out += b.toString()
      const m = /mongo\s+(mongodb:\/\/\S+)/.exec(out)
      if (m && out.includes('Press Ctrl-C')) resolve(m[1]!)
    })
    proc.once('exit', (code) => reject(new Error(`start exited with ${code}:\n${out}`)))
  })
  process.stdout.write(out.split('\n').filter((l) => /^\s+(mongo|data)/.test(l)).join('\n') + '\n')
  return { proc, ports, mongoUrl, enginePid: findEngine(proc.pid!), dir }
}

/**
 * The jongodb engine in the started process tree: a descendant whose program (argv[0]) is the
 * engine binary (its parent is the guard, a node process that names the binary only as an argument).
 */
function findEngine(root: number): number {
  const procs = new Map<number, { ppid: number; argv0: string }>()
  for (const p of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const stat = readFileSync(`/proc/${p}/stat`, 'utf8')
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
      procs.set(Number(p), { ppid, argv0: readFileSync(`/proc/${p}/cmdline`, 'utf8').split('\0')[0]! })
    } catch {
      /* gone */
    }
  }
  const descends = (pid: number): boolean => {
    for (let p = procs.get(pid); p; p = procs.get(p.ppid)) if (p.ppid === root) return true
    return false
  }
  for (const [pid, p] of procs) if (p.argv0.endsWith('/jongodb') && descends(pid)) return pid
  throw new Error('embedded engine process not found')
}

function cpuStats(pid: number): { cpuMs: number; rssMb: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  const cpuMs = ((Number(f[11]) + Number(f[12])) * 1000) / TICK
  const rss = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  return { cpuMs, rssMb: rss ? Number(rss[1]) / 1024 : 0 }
}

/** CPU ms of the started process and all its descendants (worker processes, Redis) but the engine, threads included. */
function restCpuMs(root: number, engine: number): number {
  return treeCpuMs(root) - cpuStats(engine).cpuMs
}

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0

interface Block {
  stored: number
  rps: number
  p50: number
  p99: number
  cpuPerReq: number
  /** CPU per request of everything else the start runs: API, worker processes and their render threads, Redis. */
  apiCpuPerReq: number
  rssMb: number
  seqP50?: number
  /** 1-minute load average before the block. */
  load: number
  failed: number
  failures: Record<string, number>
}

/**
 * Waits until the started system is idle: its whole process tree (engine included) below 10 % of
 * one core over a second, at most `maxMs`. A sequential sample taken while a block's leftovers
 * still run (queued renders, the engine's periodic snapshot of what the block stored) would share
 * the CPU with them and read slower for a reason that is not the store's size.
 * Returns the seconds waited.
 */
async function settle(sys: System, maxMs = 90_000): Promise<number> {
  const root = sys.proc.pid!
  const started = performance.now()
  for (;;) {
    const before = treeCpuMs(root)
    await new Promise((r) => setTimeout(r, 1000))
    if (treeCpuMs(root) - before < 100 || performance.now() - started > maxMs) return (performance.now() - started) / 1000
  }
}

/** Seconds until `one` answers 2xx, asked every 200 ms for at most 120 s. */
async function firstSuccess(one: () => Promise<Response>): Promise<number> {
  const started = performance.now()
  for (;;) {
    const ok = await one().then(
      async (r) => (await r.arrayBuffer(), r.ok),
      () => false,
    )
    if (ok) return (performance.now() - started) / 1000
    if (performance.now() - started > 120_000) throw new Error('no request succeeded within 120 s')
    await new Promise((r) => setTimeout(r, 200))
  }
}

/** `n` requests made by `concurrency` loops; a failed one is counted by status ("error" when none came), not fatal. */
async function drive(n: number, concurrency: number, one: (i: number) => Promise<Response>): Promise<{ lat: number[]; secs: number; failed: number; failures: Record<string, number> }> {
  const lat: number[] = []
  const failures: Record<string, number> = {}
  let failed = 0
  let next = 0
  const started = performance.now()
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let i = next++; i < n; i = next++) {
        const t = performance.now()
        const kind = await one(i).then(
          async (r) => (await r.arrayBuffer(), r.ok ? null : String(r.status)),
          () => 'error',
        )
        if (kind) {
          failed++
          failures[kind] = (failures[kind] ?? 0) + 1
        } else lat.push(performance.now() - t)
      }
    }),
  )
  return { lat: lat.sort((a, b) => a - b), secs: (performance.now() - started) / 1000, failed, failures }
}

/** A block sent by the load generator (its own process): `n` requests at `connections`, with the CPU each part spent. */
async function block(sys: System, target: { url: string; headers: Record<string, string>; body: string }, n: number, connections: number) {
  const load = loadAverage()
  const before = cpuStats(sys.enginePid)
  const restBefore = restCpuMs(sys.proc.pid!, sys.enginePid)
  const r = await runLoad({ ...target, method: 'POST' }, { connections, amount: n, timeout: 40 })
  const after = cpuStats(sys.enginePid)
  const rest = restCpuMs(sys.proc.pid!, sys.enginePid) - restBefore
  const { failed, failures } = loadFailures(r)
  return {
    load,
    rps: r.ok / r.seconds,
    p50: r.p50,
    p99: r.p99,
    engineMs: after.cpuMs - before.cpuMs,
    restMs: rest,
    generatorMs: r.cpuMs,
    rssMb: after.rssMb,
    failed,
    failures,
  }
}

function line(label: string, b: Block, first: Block | undefined): string {
  const ratio = ` | ${first ? (b.rps / first.rps).toFixed(2) : '—'}`
  const seq = b.seqP50 !== undefined ? ` | ${b.seqP50.toFixed(1)}${first?.seqP50 !== undefined ? ` (${b.seqP50 - first.seqP50 >= 0 ? '+' : ''}${(b.seqP50 - first.seqP50).toFixed(1)})` : ''}` : ''
  return `| ${label} | ${b.load.toFixed(1)} | ${b.stored.toLocaleString('en-US')} | ${b.rps.toFixed(0)} | ${b.p50.toFixed(1)} | ${b.p99.toFixed(1)} | ${b.cpuPerReq.toFixed(2)} | ${b.apiCpuPerReq.toFixed(2)} | ${b.rssMb.toFixed(0)}${seq}${ratio} | ${b.failed ? `${b.failed} ${describeFailures(b.failures)}` : 0} |`
}

async function json(url: string, body: unknown, key?: string): Promise<Record<string, unknown>> {
  const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) }, body: JSON.stringify(body) })
  const j = (await r.json()) as Record<string, unknown>
  if (!r.ok) throw new Error(`${url}: ${r.status} ${JSON.stringify(j)}`)
  return j
}

const CAPTURE_HEAD = '| block | load | stored | captures/s | p50 ms | p99 ms | engine CPU ms/req | API + workers + Redis CPU ms/req | engine RSS MB | ratio | failed |'
const INVOICE_HEAD =
  '| block | load | stored | invoices/s | p50 ms | p99 ms | engine CPU ms/req | API + workers (render threads) + Redis CPU ms/req | engine RSS MB | sequential p50 ms (vs empty) | ratio | failed |'

const loadAvg = () => /load average: (.*)$/.exec(execSync('uptime').toString().trim())?.[1] ?? '?'

async function main(): Promise<void> {
  const loadStart = loadAvg()
  console.log(`load average at the start: ${loadStart}`)
  const sys = await startSystem()
  const mongo = new MongoClient(sys.mongoUrl)
  await mongo.connect()
  const db = mongo.db(process.env.MONGO_DB ?? 'queueworks')
  const rows: string[] = []
  try {
    // Invoices: a business account per block (10,000 invoices a month each).
    const inv = `http://127.0.0.1:${sys.ports.invoice}/api/v1`
    let accounts = 0
    const account = async () => {
      const email = `bench-invoices-${accounts++}@example.com`
      const { api_key } = (await json(`${inv}/signup`, { email })) as { api_key: string }
      await db.collection('accounts').updateOne({ email, service: 'invoice' }, { $set: { plan: 'business' } })
      return { url: `${inv}/invoice`, headers: { 'content-type': 'application/json', authorization: `Bearer ${api_key}` }, body: JSON.stringify(invoice20) }
    }
    const sequential = (target: { url: string; headers: Record<string, string>; body: string }) =>
      drive(SEQUENTIAL_SAMPLES, 1, () => fetch(target.url, { method: 'POST', headers: target.headers, body: target.body }))
    // The invoices' empty-store figure comes first, on a store with nothing in it yet (the
    // captures come next). Warm: a cold start's first renders (JIT, fonts, the engine's first
    // writes) would make every later "vs empty" figure look like an improvement.
    console.log(`\ninvoices, empty store first (warm-up ${INVOICE_WARMUP} at concurrency 4, then removed):`)
    let target = await account()
    // `start` serves before its worker processes take jobs (the API answers 503 until then): the
    // warm-up begins once an invoice renders, or it warms nothing.
    const ready = await firstSuccess(() => fetch(target.url, { method: 'POST', headers: target.headers, body: target.body }))
    console.log(`first rendered invoice ${ready.toFixed(1)} s after asking`)
    const warm = await block(sys, target, INVOICE_WARMUP, 4)
    if (warm.failed) console.log(`warm-up: ${warm.failed} failed ${describeFailures(warm.failures)}`)
    await (await readLayout(db, 'invoices')).deleteMany({})
    // Three samples, each once the system is idle, and the middle one kept, so that one stray
    // sample does not set the baseline. (Taken after the capture phase, as it was before, the
    // samples read 34, 31 and 21 ms against 18-27 ms for the later blocks.)
    const baseline: Array<{ seq: Awaited<ReturnType<typeof sequential>>; load: number; waited: number }> = []
    for (let i = 0; i < BASELINE_SAMPLES; i++) {
      const waited = await settle(sys)
      const load = loadAverage()
      baseline.push({ seq: await sequential(target), load, waited })
    }
    console.log(`empty-store samples, sequential p50: ${baseline.map((b) => `${pct(b.seq.lat, 50).toFixed(1)} ms (load ${b.load.toFixed(1)}, idle after ${b.waited.toFixed(0)} s)`).join(', ')}`)
    const mid = [...baseline].sort((a, b) => pct(a.seq.lat, 50) - pct(b.seq.lat, 50))[Math.floor(BASELINE_SAMPLES / 2)]!
    const seq0 = mid.seq
    const failed0 = baseline.reduce((n, b) => n + b.seq.failed, 0)
    const failures0: Record<string, number> = {}
    for (const b of baseline) for (const [k, c] of Object.entries(b.seq.failures)) failures0[k] = (failures0[k] ?? 0) + c
    const stored0 = BASELINE_SAMPLES * SEQUENTIAL_SAMPLES
    const empty: Block = { stored: stored0 - failed0, rps: (SEQUENTIAL_SAMPLES - seq0.failed) / seq0.secs, p50: pct(seq0.lat, 50), p99: pct(seq0.lat, 99), cpuPerReq: 0, apiCpuPerReq: 0, rssMb: cpuStats(sys.enginePid).rssMb, seqP50: pct(seq0.lat, 50), load: mid.load, failed: failed0, failures: failures0 }
    const emptyRow = line(`empty (sequential, warm; middle of ${BASELINE_SAMPLES})`, empty, undefined)
    console.log(emptyRow)

    // Captures: one business account (1,000,000 per day), one endpoint.
    const wh = `http://127.0.0.1:${sys.ports.webhooks}`
    const { api_key: whKey } = (await json(`${wh}/api/v1/signup`, { email: 'bench-captures@example.com' })) as { api_key: string }
    await db.collection('accounts').updateOne({ email: 'bench-captures@example.com', service: 'webhooks' }, { $set: { plan: 'business' } })
    const ep = (await json(`${wh}/api/v1/endpoints`, {}, whKey)) as { url: string }
    const hook = ep.url.replace(/^https?:\/\/[^/]+/, wh)
    console.log('\ncaptures (concurrency 16, ~80-byte JSON):')
    console.log(CAPTURE_HEAD)
    let first: Block | undefined
    let capEngineMs = 0
    let capRestMs = 0
    let capGenMs = 0
    const capture = { url: hook, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ event: 'order.paid', n: 1, amount: 4200, currency: 'EUR' }) }
    // Warm-up to an endpoint of its own (its captures are not in the blocks' counts): the first
    // block then measures a started system, not its JIT and first writes.
    if (CAPTURE_WARMUP > 0) {
      const warmEp = (await json(`${wh}/api/v1/endpoints`, {}, whKey)) as { url: string }
      const warm = await block(sys, { ...capture, url: warmEp.url.replace(/^https?:\/\/[^/]+/, wh) }, CAPTURE_WARMUP, 16)
      console.log(`warm-up: ${CAPTURE_WARMUP} captures to another endpoint, ${warm.rps.toFixed(0)}/s${warm.failed ? `, ${warm.failed} failed ${describeFailures(warm.failures)}` : ''}`)
    }
    for (let stored = 0; stored < CAPTURES; ) {
      const n = Math.min(CAPTURE_BLOCK, CAPTURES - stored)
      const r = await block(sys, capture, n, 16)
      stored += n
      const b: Block = { stored, rps: r.rps, p50: r.p50, p99: r.p99, cpuPerReq: r.engineMs / n, apiCpuPerReq: r.restMs / n, rssMb: r.rssMb, load: r.load, failed: r.failed, failures: r.failures }
      first ??= b
      capEngineMs += r.engineMs
      capRestMs += r.restMs
      capGenMs += r.generatorMs
      const row = line(`${(stored - n).toLocaleString('en-US')}–${stored.toLocaleString('en-US')}`, b, first)
      rows.push(row)
      console.log(row)
    }
    const genMs = capGenMs / CAPTURES
    const perCapture = capEngineMs / CAPTURES + capRestMs / CAPTURES + genMs
    const loadCaptures = loadAvg()
    const ceiling = `CPU per capture over all blocks: engine ${(capEngineMs / CAPTURES).toFixed(2)} ms + API, workers and Redis ${(capRestMs / CAPTURES).toFixed(2)} ms + load generator (autocannon, its own process) ${genMs.toFixed(2)} ms = ${perCapture.toFixed(2)} ms, so two otherwise idle cores could take at most ~${Math.round(2000 / perCapture)} captures/s. Load average at the start: ${loadStart}; after the captures: ${loadCaptures}.`
    console.log(ceiling)
    const capRows = rows.splice(0)

    console.log(`\ninvoices, 20 lines (fill at concurrency 4; sequential p50 of 50 single POST /invoice after each block):`)
    console.log(INVOICE_HEAD)
    rows.push(emptyRow)

    let fillFirst: Block | undefined
    const waits: number[] = baseline.map((b) => b.waited)
    for (let stored = stored0; stored < INVOICES; ) {
      const n = Math.min(INVOICE_BLOCK, INVOICES - stored)
      target = await account()
      const r = await block(sys, target, n, 4)
      stored += n
      waits.push(await settle(sys))
      const seq = await sequential(target)
      stored += SEQUENTIAL_SAMPLES
      const failures = { ...r.failures }
      for (const [k, c] of Object.entries(seq.failures)) failures[k] = (failures[k] ?? 0) + c
      const b: Block = { stored, rps: r.rps, p50: r.p50, p99: r.p99, cpuPerReq: r.engineMs / n, apiCpuPerReq: r.restMs / n, rssMb: r.rssMb, seqP50: pct(seq.lat, 50), load: r.load, failed: r.failed + seq.failed, failures }
      fillFirst ??= b
      const row = line(`${(stored - n - SEQUENTIAL_SAMPLES).toLocaleString('en-US')}–${stored.toLocaleString('en-US')}`, b, { ...fillFirst, seqP50: empty.seqP50 })
      rows.push(row)
      console.log(`${row} (idle after ${waits.at(-1)!.toFixed(0)} s)`)
    }
    // A clean stop writes the last snapshot; the next start restores it. How long each takes with
    // everything above stored, and whether it all came back.
    await mongo.close()
    const stopAt = performance.now()
    sys.proc.kill('SIGTERM')
    const code = await new Promise((r) => sys.proc.once('exit', r))
    const stopMs = performance.now() - stopAt
    const snapDir = join(sys.dir, 'data', 'snapshot')
    const snapMb = readdirSync(snapDir).reduce((n, f) => n + statSync(join(snapDir, f)).size, 0) / 1e6
    const startAt = performance.now()
    const again = await startSystem(sys.dir, sys.ports)
    const startMs = performance.now() - startAt
    const back = await fetch(`${wh}/api/v1/endpoints/${hook.split('/').pop()}`, { headers: { authorization: `Bearer ${whKey}` } }).then((r) => r.json() as Promise<{ request_count: number }>)
    const restart = `Clean stop (SIGTERM, exit ${code}) with everything above stored: ${(stopMs / 1000).toFixed(1)} s, snapshot ${snapMb.toFixed(0)} MB; next start until ready (restore included): ${(startMs / 1000).toFixed(1)} s; captures stored after restart: ${back.request_count} (expected ${CAPTURES}).`
    console.log(`\n${restart}`)
    sys.proc = again.proc
    writeBenchSection(
      [
        '## Embedded store (`npm run bench:embedded`)',
        '',
        `\`npm start\` with no MONGO_URL (embedded engine, snapshots on), filled in blocks; ${new Date().toISOString().slice(0, 10)}, this machine (2 cores shared with other work: the load column is the 1-minute load average before each block). ` +
          `${CAPTURES.toLocaleString('en-US')} captures in blocks of ${CAPTURE_BLOCK.toLocaleString('en-US')}, ${INVOICES.toLocaleString('en-US')} invoices in blocks of ${INVOICE_BLOCK.toLocaleString('en-US')}; each block sent by autocannon in its own process (lib/harness.ts).`,
        'Engine CPU and RSS are those of the jongodb process; the next CPU column is every other process of the start (API, worker processes with their render threads, Redis); ratio = throughput against the first block; failed = requests that did not succeed, by status.',
        '',
        `Captures, ~80-byte JSON into one endpoint at concurrency 16, after ${CAPTURE_WARMUP.toLocaleString('en-US')} warm-up captures to another endpoint (not counted):`,
        '',
        CAPTURE_HEAD,
        '|---|---|---|---|---|---|---|---|---|---|---|',
        ...capRows,
        '',
        ceiling,
        '',
        `Invoices: the 20-line invoice of bench:invoice, single \`POST /invoice\`; the empty-store row is taken before the captures, on a store with nothing in it, after ${INVOICE_WARMUP.toLocaleString('en-US')} warm-up invoices (then removed); filled after the captures at concurrency 4; after each block, once the started system is idle again (its processes below 10 % of a core: the engine's snapshot of the block and any queued work done; waited ${Math.min(...waits).toFixed(0)}–${Math.max(...waits).toFixed(0)} s), 50 sequential requests (their p50 against the empty store's in brackets: the middle of ${BASELINE_SAMPLES} samples taken the same way, ${baseline.map((b) => pct(b.seq.lat, 50).toFixed(1)).join(', ')} ms):`,
        '',
        INVOICE_HEAD,
        '|---|---|---|---|---|---|---|---|---|---|---|---|',
        ...rows,
        '',
        restart,
        `Load average at the end: ${loadAvg()}.`,
        '',
      ].join('\n'),
    )
  } finally {
    await mongo.close().catch(() => undefined)
    sys.proc.kill('SIGTERM')
    await new Promise((r) => sys.proc.once('exit', r))
    rmSync(sys.dir, { recursive: true, force: true })
  }
}

runBench(main)
