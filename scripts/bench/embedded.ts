// bench:embedded — does `npm start` on the embedded engine stay fast as it fills up?
// Starts `tsx src/main.ts start` (no MONGO_URL, a fresh data folder, snapshots on as for a user)
// on free ports, then fills it in blocks and prints one line per block:
//   1. captures: ~80-byte JSON POSTs to one endpoint at concurrency 16, BENCH_CAPTURES in all
//      (default 100,000) in blocks of BENCH_CAPTURE_BLOCK (default 10,000);
//   2. invoices: single POST /invoice at concurrency 4 up to BENCH_INVOICES (default 20,000) in
//      blocks of BENCH_INVOICE_BLOCK, and in each block the p50 of sequential single requests;
// BENCH_NODE_ARGS passes node flags to the started process (--cpu-prof to see where a capture's time goes);
// with stored count, throughput, p50/p99, the engine's CPU per request (from /proc/<pid>/stat)
// and its RSS, and each block's ratio against the first (empty-store) block.
// Results go to docs/benchmarks.md (section "## Embedded store").
import { execSync, spawn, type ChildProcess } from 'node:child_process'
import http from 'node:http'
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import getPort from 'get-port'
import { MongoClient } from 'mongodb'
import { runBench } from './lib/run.ts'
import { writeBenchSection } from './lib/report.ts'

const CAPTURES = Number(process.env.BENCH_CAPTURES ?? 100_000)
const CAPTURE_BLOCK = Number(process.env.BENCH_CAPTURE_BLOCK ?? 10_000)
const INVOICES = Number(process.env.BENCH_INVOICES ?? 20_000)
const INVOICE_BLOCK = Number(process.env.BENCH_INVOICE_BLOCK ?? 2_000)
const SEQUENTIAL_SAMPLES = 50
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
  dir = mkdtempSync(join(tmpdir(), 'qw-bench-embedded-')),
  ports = { invoice: 0, flags: 0, webhooks: 0 },
): Promise<System> {
  if (!ports.invoice) Object.assign(ports, { invoice: await getPort(), flags: await getPort(), webhooks: await getPort() })
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

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0

interface Block {
  stored: number
  rps: number
  p50: number
  p99: number
  cpuPerReq: number
  /** CPU of the API process (Node) per request. */
  apiCpuPerReq: number
  rssMb: number
  seqP50?: number
}

/** `n` requests made by `concurrency` loops; every answer must be `ok`. */
/** What drive() needs of an answer: fetch's Response, or postLean's. */
interface Answer {
  ok: boolean
  status: number
  arrayBuffer(): Promise<unknown>
  text(): Promise<string>
}

// The captures are sent with node:http over kept-alive sockets, not fetch: the sender shares the
// two cores with the system it measures, and fetch cost it ~0.5 ms of CPU per request.
const leanAgent = new http.Agent({ keepAlive: true, maxSockets: 64 })

function postLean(url: string, body: string, headers: Record<string, string>): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', agent: leanAgent, headers: { ...headers, 'content-length': Buffer.byteLength(body) } }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('error', reject)
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8')
        const status = res.statusCode ?? 0
        resolve({ ok: status >= 200 && status < 300, status, arrayBuffer: async () => undefined, text: async () => text })
      })
    })
    req.on('error', reject)
    req.end(body)
  })
}

async function drive(n: number, concurrency: number, one: (i: number) => Promise<Answer>): Promise<{ lat: number[]; secs: number }> {
  const lat: number[] = []
  let next = 0
  const started = performance.now()
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let i = next++; i < n; i = next++) {
        const t = performance.now()
        const r = await one(i)
        await r.arrayBuffer()
        if (!r.ok) throw new Error(`request ${i}: ${r.status} ${await r.text().catch(() => '')}`)
        lat.push(performance.now() - t)
      }
    }),
  )
  return { lat: lat.sort((a, b) => a - b), secs: (performance.now() - started) / 1000 }
}

function line(label: string, b: Block, first: Block | undefined): string {
  const ratio = first ? ` | ${(b.rps / first.rps).toFixed(2)}` : ''
  const seq = b.seqP50 !== undefined ? ` | ${b.seqP50.toFixed(1)}${first?.seqP50 !== undefined ? ` (${b.seqP50 - first.seqP50 >= 0 ? '+' : ''}${(b.seqP50 - first.seqP50).toFixed(1)})` : ''}` : ''
  return `| ${label} | ${b.stored.toLocaleString('en-US')} | ${b.rps.toFixed(0)} | ${b.p50.toFixed(1)} | ${b.p99.toFixed(1)} | ${b.cpuPerReq.toFixed(2)} | ${b.apiCpuPerReq.toFixed(2)} | ${b.rssMb.toFixed(0)}${seq}${ratio} |`
}

async function json(url: string, body: unknown, key?: string): Promise<Record<string, unknown>> {
  const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) }, body: JSON.stringify(body) })
  const j = (await r.json()) as Record<string, unknown>
  if (!r.ok) throw new Error(`${url}: ${r.status} ${JSON.stringify(j)}`)
  return j
}

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
    // Captures: one business account (1,000,000 per day), one endpoint.
    const wh = `http://127.0.0.1:${sys.ports.webhooks}`
    const { api_key: whKey } = (await json(`${wh}/api/v1/signup`, { email: 'bench-captures@example.com' })) as { api_key: string }
    await db.collection('accounts').updateOne({ email: 'bench-captures@example.com', service: 'webhooks' }, { $set: { plan: 'business' } })
    const ep = (await json(`${wh}/api/v1/endpoints`, {}, whKey)) as { url: string }
    const hook = ep.url.replace(/^https?:\/\/[^/]+/, wh)
    console.log('\ncaptures (concurrency 16, ~80-byte JSON):')
    console.log('| block | stored | captures/s | p50 ms | p99 ms | engine CPU ms/req | API CPU ms/req | engine RSS MB | ratio |')
    let first: Block | undefined
    const genBefore = process.cpuUsage()
    let capEngineMs = 0
    let capApiMs = 0
    for (let stored = 0; stored < CAPTURES; ) {
      const n = Math.min(CAPTURE_BLOCK, CAPTURES - stored)
      const before = cpuStats(sys.enginePid)
      const apiBefore = cpuStats(sys.proc.pid!)
      const { lat, secs } = await drive(n, 16, (i) =>
        postLean(hook, JSON.stringify({ event: 'order.paid', n: stored + i, amount: 4200, currency: 'EUR' }), { 'content-type': 'application/json' }),
      )
      const after = cpuStats(sys.enginePid)
      const apiAfter = cpuStats(sys.proc.pid!)
      stored += n
      const b: Block = { stored, rps: n / secs, p50: pct(lat, 50), p99: pct(lat, 99), cpuPerReq: (after.cpuMs - before.cpuMs) / n, apiCpuPerReq: (apiAfter.cpuMs - apiBefore.cpuMs) / n, rssMb: after.rssMb }
      first ??= b
      capEngineMs += after.cpuMs - before.cpuMs
      capApiMs += apiAfter.cpuMs - apiBefore.cpuMs
      const row = line(`${(stored - n).toLocaleString('en-US')}–${stored.toLocaleString('en-US')}`, b, first)
      rows.push(row)
      console.log(row)
    }
    const gen = process.cpuUsage(genBefore)
    const genMs = (gen.user + gen.system) / 1000 / CAPTURES
    const perCapture = capEngineMs / CAPTURES + capApiMs / CAPTURES + genMs
    const loadCaptures = loadAvg()
    const ceiling = `CPU per capture over all blocks: engine ${(capEngineMs / CAPTURES).toFixed(2)} ms + API ${(capApiMs / CAPTURES).toFixed(2)} ms + load generator (the benchmark's own process) ${genMs.toFixed(2)} ms = ${perCapture.toFixed(2)} ms, so two otherwise idle cores could take at most ~${Math.round(2000 / perCapture)} captures/s. Load average at the start: ${loadStart}; after the captures: ${loadCaptures}.`
    console.log(ceiling)
    const capRows = rows.splice(0)

    // Invoices: enough business accounts for the monthly limit (10,000 each).
    const inv = `http://127.0.0.1:${sys.ports.invoice}/api/v1`
    const keys: string[] = []
    for (let i = 0; i * 10_000 < INVOICES + (INVOICES / INVOICE_BLOCK + 1) * SEQUENTIAL_SAMPLES; i++) {
      const email = `bench-invoices-${i}@example.com`
      const { api_key } = (await json(`${inv}/signup`, { email })) as { api_key: string }
      await db.collection('accounts').updateOne({ email, service: 'invoice' }, { $set: { plan: 'business' } })
      keys.push(api_key)
    }
    let used = 0
    const post = () => {
      const key = keys[Math.floor(used++ / 9_990)]!
      return fetch(`${inv}/invoice`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
        body: JSON.stringify({ items: [{ description: 'Consulting', quantity: 10, unit_price: 120 }], tax_rate: 19 }),
      })
    }
    console.log('\ninvoices (fill at concurrency 4; sequential p50 of 50 single POST /invoice after each block):')
    console.log('| block | stored | invoices/s | p50 ms | p99 ms | engine CPU ms/req | API CPU ms/req | engine RSS MB | sequential p50 ms (vs empty) | ratio |')
    // The empty-store figure first.
    const seq0 = await drive(SEQUENTIAL_SAMPLES, 1, post)
    let firstInv: Block | undefined = { stored: SEQUENTIAL_SAMPLES, rps: SEQUENTIAL_SAMPLES / seq0.secs, p50: pct(seq0.lat, 50), p99: pct(seq0.lat, 99), cpuPerReq: 0, apiCpuPerReq: 0, rssMb: cpuStats(sys.enginePid).rssMb, seqP50: pct(seq0.lat, 50) }
    rows.push(line('empty (sequential)', firstInv, undefined))
    console.log(rows.at(-1))
    firstInv = { ...firstInv }
    let fillFirst: Block | undefined
    for (let stored = SEQUENTIAL_SAMPLES; stored < INVOICES; ) {
      const n = Math.min(INVOICE_BLOCK, INVOICES - stored)
      const before = cpuStats(sys.enginePid)
      const apiBefore = cpuStats(sys.proc.pid!)
      const { lat, secs } = await drive(n, 4, post)
      const after = cpuStats(sys.enginePid)
      const apiAfter = cpuStats(sys.proc.pid!)
      stored += n
      const seq = await drive(SEQUENTIAL_SAMPLES, 1, post)
      stored += SEQUENTIAL_SAMPLES
      const b: Block = { stored, rps: n / secs, p50: pct(lat, 50), p99: pct(lat, 99), cpuPerReq: (after.cpuMs - before.cpuMs) / n, apiCpuPerReq: (apiAfter.cpuMs - apiBefore.cpuMs) / n, rssMb: after.rssMb, seqP50: pct(seq.lat, 50) }
      fillFirst ??= b
      const row = line(`${(stored - n - SEQUENTIAL_SAMPLES).toLocaleString('en-US')}–${stored.toLocaleString('en-US')}`, b, { ...fillFirst, seqP50: firstInv.seqP50 })
      rows.push(row)
      console.log(row)
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
        `\`npm start\` with no MONGO_URL (embedded engine, snapshots on), filled in blocks; ${new Date().toISOString().slice(0, 10)}, this machine (2 cores shared).`,
        'Engine CPU and RSS are those of the jongodb process; ratio = throughput against the first block.',
        '',
        'Captures, ~80-byte JSON into one endpoint at concurrency 16:',
        '',
        '| block | stored | captures/s | p50 ms | p99 ms | engine CPU ms/req | API CPU ms/req | engine RSS MB | ratio |',
        '|---|---|---|---|---|---|---|---|---|',
        ...capRows,
        '',
        ceiling,
        '',
        'Invoices, single `POST /invoice`, filled at concurrency 4; after each block 50 sequential requests (their p50 against the empty store in brackets):',
        '',
        '| block | stored | invoices/s | p50 ms | p99 ms | engine CPU ms/req | API CPU ms/req | engine RSS MB | sequential p50 ms | ratio |',
        '|---|---|---|---|---|---|---|---|---|---|',
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
