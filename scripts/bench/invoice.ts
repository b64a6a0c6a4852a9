// Invoice benchmark (npm run bench:invoice). Reference, measured in the same run: stock pdfmake
// rendering the same invoice (the document definition made by the service's own builder) in a
// tight loop on as many threads as a worker process has render threads, in a process of its own
// (lib/render-reference.ts). Then end to end over HTTP against one API process and one worker
// process (spawned as in production): CPU per invoice of every process (API, worker, Redis, MongoDB
// engine, from /proc) against the reference's CPU per document (target ≤ 1.2 ×; the API alone
// ≤ 2 ms, beside the floor a bare app making the same round trips costs: lib/api-floor.mjs), for
// 20-, 200- and 1,000-line invoices with the cost per line; sequential p50 latency vs
// render time + 10 ms; throughput at concurrency 8 in interleaved rounds with the reference
// (lib/harness.ts: autocannon in its own process, median and range, load average per round) vs
// 0.9 × the reference; worker RSS after 2,000 renders vs after 200. A failed request (504 render timed out, 503 overloaded) is counted
// and reported, never the end of the run. Uses REDIS_URL / MONGO_URL when set, else embedded ones;
// ports and folders: BENCH_PORT_BASE, BENCH_DATA_DIR (docs/benchmarks.md).
import { runBench } from './lib/run.ts'
import { spawn, type ChildProcess } from 'node:child_process'
import { createInterface } from 'node:readline'
import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { Queue } from 'bullmq'
import { MongoClient } from 'mongodb'
import { Redis } from 'ioredis'
import { loadConfig } from '../../src/platform/config.ts'
import { benchPort, benchStores } from './lib/bench-env.ts'
import { describeFailures, fmt, interleave, loadAverage, loadFailures, loadRange, medianRange, ratio as roundRatio, runLoad, type Side } from './lib/harness.ts'
import { invoice20 as invoice } from './lib/invoice-20.ts'
import { readLayout } from '../../src/platform/store/partitioned.ts'
import { facturxVsPlain, varied } from './lib/facturx-render.ts'
import { invoiceOfLines } from './lib/invoice-20.ts'
import { cpuDelta, cpuOf, treeCpuMs } from './lib/proc-cpu.ts'
import { measureApiFloor } from './lib/api-floor.ts'

const CONCURRENCY = 8
const RSS_EARLY = 200
const RSS_LATE = Number(process.env.BENCH_RSS_RENDERS ?? 2_000)
const SEQUENTIAL_N = 50
/** Windows of SEQUENTIAL_N invoices, each paired with a reference window right after it. */
const CPU_PAIRS = 5
/** Invoices sent after the e-invoice warm-up wait, before anything is measured. */
const RSS_WARM_AGAIN = 100
/** Requests to the API floor (2–3 ms each): enough 10 ms CPU ticks for a figure to 0.05 ms. */
const FLOOR_N = 400
/** Longer invoices: lines and how many are sent one after another. */
const LONG = [
  { lines: 200, n: 20 },
  { lines: 1_000, n: 6 },
]

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length ? s[Math.floor((s.length - 1) / 2)]! : NaN
}
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor((s.length * p) / 100))]!
}

interface Reference {
  side: Side
  child: ChildProcess
  /** One stretch of `ms` on every thread with invoices of `lines` lines: documents and CPU ms per document. */
  /** `threads`: how many of its threads render (default all); 1 for the one-at-a-time reference. */
  measure(ms: number, lines: number, threads?: number): Promise<{ docs: number; cpuMsPerDoc: number; seconds: number }>
}

/** The reference process: `threads` threads rendering in a loop, asked for one round at a time. */
async function startRenderReference(threads: number): Promise<Reference> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/bench/lib/render-reference.ts', String(threads)], { stdio: ['pipe', 'pipe', 'inherit'] })
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]()
  const next = async () => {
    const l = await lines.next()
    if (l.done) throw new Error('the render reference exited')
    return l.value as string
  }
  if ((await next()) !== 'ready') throw new Error('the render reference did not start')
  const measure = async (ms: number, lines: number, use = threads) => {
    const cpu = treeCpuMs(child.pid!)
    child.stdin!.write(`${ms} ${lines} ${use}\n`)
    const { docs, seconds } = JSON.parse(await next()) as { docs: number; seconds: number }
    return { docs, seconds, cpuMsPerDoc: (treeCpuMs(child.pid!) - cpu) / docs }
  }
  const side: Side = {
    name: 'reference',
    unit: 'docs/s',
    async round(seconds) {
      const m = await measure(seconds * 1000, 20)
      return { rate: m.docs / m.seconds, failed: 0 }
    },
  }
  return { side, child, measure }
}

function spawnRole(args: string[], env: Record<string, string>): ChildProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'inherit', 'inherit'] })
  return child
}

/** The process's RSS in MB; NaN once it has exited (the sampler may tick during cleanup). */
function rssMb(pid: number): number {
  let status: string
  try {
    status = readFileSync(`/proc/${pid}/status`, 'utf8')
  } catch {
    return NaN
  }
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1]) / 1024
}

async function waitFor(what: string, fn: () => Promise<boolean>, timeoutMs = 90_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await fn().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 200))
  }
}

async function main(): Promise<void> {
  const usingEmbeddedMongo = !process.env.MONGO_URL
  const stops: Array<() => Promise<void>> = []
  const children: ChildProcess[] = []
  const cleanup = async () => {
    for (const c of children) if (c.exitCode === null) c.kill('SIGTERM')
    await Promise.all(children.map((c) => (c.exitCode !== null ? null : new Promise((r) => c.once('exit', r)))))
    for (const s of stops.reverse()) await s()
  }
  process.once('SIGINT', () => void cleanup().then(() => process.exit(130)))

  try {
    console.log('# invoice benchmark\n')
    console.log(`cpus: ${(await import('node:os')).availableParallelism()}, node ${process.version}`)
    // The processes whose CPU an invoice costs (Redis and MongoDB only when embedded here).
    const pids: Record<string, number> = {}
    const { redisUrl, mongoUrl } = await benchStores(stops, pids)
    if (usingEmbeddedMongo) {
      console.log('MongoDB: the EMBEDDED in-memory engine (MONGO_URL unset). Its writes slow down as a collection grows')
      console.log('(docs/embedded-store.md), so stored invoices are cleared between phases; set MONGO_URL for a real MongoDB.')
    } else console.log(`MongoDB: ${mongoUrl.replace(/\/\/[^@]*@/, '//***@')}`)

    console.log('\nfacturx (PDF/A-3b + CII XML) vs plain PDF, same invoice, in-process …')
    const fx = await facturxVsPlain(invoice)
    console.log(`  plain ${fmt(fx.plainMs, 2)} ms, facturx ${fmt(fx.facturxMs, 2)} ms: ${fmt(fx.ratio, 2)} × (target ≤ 2)`)
    console.log('  … and with every document different (new words, amounts and number each time) …')
    const fxv = await facturxVsPlain(invoice, 10_000, varied)
    console.log(`  plain ${fmt(fxv.plainMs, 2)} ms, facturx ${fmt(fxv.facturxMs, 2)} ms: ${fmt(fxv.ratio, 2)} ×`)

    const id = randomBytes(4).toString('hex')
    const port = await benchPort()
    const env: Record<string, string> = {
      NODE_ENV: 'production',
      LOG_LEVEL: 'warn',
      HOST: '127.0.0.1',
      INVOICE_PORT: String(port),
      REDIS_URL: redisUrl,
      MONGO_URL: mongoUrl,
      MONGO_DB: `bench_${id}`,
      QUEUE_PREFIX: `bench_${id}`,
    }
    // The reference gets as many threads as the worker renders on (RENDER_CONCURRENCY).
    const threads = loadConfig(process.env).RENDER_CONCURRENCY
    env.RENDER_CONCURRENCY = String(threads)
    const api = spawnRole(['api', '--service', 'invoice'], env)
    const worker = spawnRole(['worker', '--queues', 'invoice-render', '--concurrency', String(CONCURRENCY)], env)
    children.push(api, worker)
    pids.api = api.pid!
    pids.worker = worker.pid!
    const base = `http://127.0.0.1:${port}/api/v1`
    const queueConn = new Redis(redisUrl, { maxRetriesPerRequest: null })
    const queue = new Queue('invoice-render', { connection: queueConn, prefix: env.QUEUE_PREFIX! })
    stops.push(async () => {
      await queue.close()
      queueConn.disconnect()
    })
    await waitFor('the API process', async () => (await fetch(`${base}/usage`)).status === 401)
    await waitFor('the worker process', async () => (await queue.getWorkersCount()) > 0)

    const mongo = await MongoClient.connect(mongoUrl)
    stops.push(() => mongo.close())
    const db = mongo.db(env.MONGO_DB!)
    const signup = await (await fetch(`${base}/signup`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: `bench-${id}@example.com` }) })).json()
    // Business plan: 10,000 invoices a month, enough for every phase.
    await db.collection('accounts').updateOne({ email: `bench-${id}@example.com` }, { $set: { plan: 'business' } })
    const headers = { 'content-type': 'application/json', authorization: `Bearer ${signup.api_key}` }
    const payload = JSON.stringify(invoice)
    const clearStored = async () => {
      if (usingEmbeddedMongo) await (await readLayout(db, 'invoices')).deleteMany({})
    }

    // Worker RSS is sampled every 50 ms against the number of invoices answered so far. A single
    // reading swings ±7 % with where the render threads' garbage collector happens to be, so
    // "RSS after n renders" is the median of the readings over the last 100 renders before n.
    let answered = 0
    const rssSamples: Array<[number, number]> = []
    const sampler = setInterval(() => {
      const mb = rssMb(worker.pid!)
      if (!Number.isNaN(mb)) rssSamples.push([answered, mb])
    }, 50)
    stops.push(async () => clearInterval(sampler))
    const rssAround = (n: number) => median(rssSamples.filter(([count]) => count > n - 100 && count <= n).map(([, mb]) => mb))

    // A failed request is counted by its status (or "error"), never the end of the run: on a loaded
    // machine a render may time out (504) or be refused while the queue is long (503).
    const failures: Record<string, number> = {}
    const fail = (kind: string) => (failures[kind] = (failures[kind] ?? 0) + 1)
    const one = async (body = payload): Promise<number | null> => {
      const t = performance.now()
      try {
        const r = await fetch(`${base}/invoice`, { method: 'POST', headers, body })
        const buf = Buffer.from(await r.arrayBuffer())
        if (r.status !== 200 || buf.subarray(0, 5).toString() !== '%PDF-') return fail(String(r.status)), null
      } catch {
        return fail('error'), null
      }
      return performance.now() - t
    }
    const run = async (n: number, concurrency: number, body = payload): Promise<{ wallMs: number; latencies: number[] }> => {
      let next = 0
      const latencies: number[] = []
      const t = performance.now()
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          while (next < n) {
            next++
            const ms = await one(body)
            if (ms !== null) latencies.push(ms)
            answered++
          }
        }),
      )
      return { wallMs: performance.now() - t, latencies }
    }

    // The API refuses invoices (503) until it sees a worker consuming the render queue; the
    // measurement starts once one is served end to end.
    await waitFor('the first invoice served end to end', async () => (await fetch(`${base}/invoice`, { method: 'POST', headers, body: payload })).status === 200, 120_000)
    const served = Date.now()
    await clearStored()

    // Warm-up: the render threads' JIT gets what the reference's threads get before they are
    // timed, and its renders are the first RSS_EARLY of the RSS measurement.
    console.log(`\nwarm-up: ${RSS_EARLY} invoices (load ${loadAverage().toFixed(2)}) …`)
    await run(RSS_EARLY, CONCURRENCY)
    const warmupFailures = { ...failures }
    await clearStored()
    // The worker's render threads load the e-invoice libraries 20 s after it is ready
    // (src/invoice/pdf/pool-render-threads.ts): a one-off burst of ~0.3 s of CPU and their memory. Measured
    // before it was done, it fell into whichever phase ran then (once the sequential one: +5 ms per
    // invoice of worker CPU) and into the RSS growth. So every measurement starts after it.
    const warmedAt = served + 30_000
    if (Date.now() < warmedAt) {
      console.log(`waiting ${((warmedAt - Date.now()) / 1000).toFixed(0)} s for the worker's e-invoice warm-up …`)
      await new Promise((r) => setTimeout(r, warmedAt - Date.now()))
    }
    const afterWarmUp = rssSamples.length
    await new Promise((r) => setTimeout(r, 1_000))
    // Still "after RSS_EARLY renders": the readings of the last second, once the warm-up is done.
    const rssEarly = median(rssSamples.slice(afterWarmUp).map(([, mb]) => mb))

    // CPU per 20-line invoice: pairs of adjacent windows, ours (SEQUENTIAL_N sequential invoices,
    // every process) then the reference (one raw render at a time on one thread, as a sequential
    // invoice renders), so that both sides of a pair see the same state of the machine: the cores
    // here slow down for a minute or two at a time, and a ratio of windows minutes apart measured
    // that as much as the code (20 lines: 1.08-1.44 x in four runs of one hour).
    const reference = await startRenderReference(threads)
    children.push(reference.child)
    // Both sides warm again after the wait: V8 drops compiled code an idle process does not run,
    // and the reference's threads have not rendered yet (the first pair of an unwarmed run read
    // 1.75 × against 1.1 for the next).
    await run(RSS_WARM_AGAIN, CONCURRENCY)
    await clearStored()
    await reference.measure(2_000, 20, 1)
    const seqLoad = loadAverage()
    console.log(`single requests: ${CPU_PAIRS} × ${SEQUENTIAL_N} sequential, each followed by the reference on one thread (load ${seqLoad.toFixed(2)}) …`)
    const seqFailedBefore = Object.values(failures).reduce((a, b) => a + b, 0)
    const pairs: Array<{ ours: Record<string, number>; raw: number }> = []
    const seqLatencies: number[] = []
    const renderMs: number[] = []
    for (let i = 0; i < CPU_PAIRS; i++) {
      const c0 = cpuOf(pids)
      const r = await run(SEQUENTIAL_N, 1)
      const used = cpuDelta(c0, cpuOf(pids))
      seqLatencies.push(...r.latencies)
      renderMs.push(...(await (await readLayout(db, 'invoices')).findAll({ status: 'done' })).map((d) => d.render_ms as number))
      await clearStored()
      const raw = await reference.measure(1_500, 20, 1)
      pairs.push({ ours: Object.fromEntries(Object.entries(used).map(([k, v]) => [k, v / (r.latencies.length || 1)])), raw: raw.cpuMsPerDoc })
    }
    const seqFailed = Object.values(failures).reduce((a, b) => a + b, 0) - seqFailedBefore
    const workerRenderMs = median(renderMs)
    const seqP50 = median(seqLatencies)
    const pairTotal = (p: (typeof pairs)[number]) => Object.values(p.ours).reduce((a, b) => a + b, 0)
    const pairRatios = pairs.map((p) => pairTotal(p) / p.raw)
    // The pair of the median ratio stands for the run; the range of the ratios is printed beside it.
    const medianPair = pairs[pairRatios.indexOf(median(pairRatios))]!
    const apiPerInvoice = median(pairs.map((p) => p.ours.api ?? 0))

    // The floor under the API process's share: what a bare Koa app doing only the round trips an
    // answered render needs costs here (lib/api-floor.mjs), with one of our own PDFs as its answer.
    const sample = await fetch(`${base}/invoice`, { method: 'POST', headers, body: payload })
    const samplePdf = Buffer.from(await sample.arrayBuffer())
    await clearStored()
    console.log(`API floor: ${FLOOR_N} sequential requests to a bare Koa app + 1 MongoDB update + 1 Redis push + the PDF by pub/sub (load ${loadAverage().toFixed(2)}) …`)
    const floor = await measureApiFloor({ redisUrl, mongoUrl, db: env.MONGO_DB!, prefix: `${env.QUEUE_PREFIX}:floor`, pdf: samplePdf, body: payload, n: FLOOR_N })

    // Throughput: the reference's threads and the system in interleaved rounds.
    console.log(`\nthroughput: reference (${threads} render threads) and end to end at concurrency ${CONCURRENCY}, interleaved rounds …`)
    let e2eAnswered = 0
    const ours: Side = {
      name: 'end to end',
      unit: 'invoices/s',
      async round(seconds) {
        // A render may wait behind the 8 in flight: a request counts as timed out only past the
        // service's own render deadline.
        const r = await runLoad({ url: `${base}/invoice`, method: 'POST', headers, body: payload }, { connections: CONCURRENCY, duration: seconds, timeout: 40 })
        answered += r.ok + r.non2xx
        e2eAnswered += r.ok + r.non2xx
        await clearStored()
        return { rate: r.ok / r.seconds, p50: r.p50, p99: r.p99, ...loadFailures(r) }
      },
    }
    const tp = await interleave([reference.side, ours], { warmupSeconds: 2 })
    const ref = tp.reference!
    const e2e = tp['end to end']!
    const ratio = roundRatio(e2e, ref)
    const refMsPerDoc = (threads * 1000) / ref.median
    // A single request renders alone: its like-for-like reference is one raw render at a time on
    // one thread, not a thread's share of the throughput rounds (both threads busy on two cores).
    const solo20 = await reference.measure(3_000, 20, 1)
    const soloMs20 = (solo20.seconds * 1000) / solo20.docs

    // CPU per invoice by line count: ours sequential (every process) against the reference on one
    // thread in the window right after ours (20 lines: the median of the pairs above).
    const cpuRows: Array<{ lines: number; ours: Record<string, number>; raw: number; p50: number; rawWallMs: number }> = []
    const perInvoice = (used: Record<string, number>, n: number) => Object.fromEntries(Object.entries(used).map(([k, v]) => [k, v / n]))
    cpuRows.push({ lines: 20, ours: { ...medianPair.ours, api: apiPerInvoice }, raw: medianPair.raw, p50: seqP50, rawWallMs: soloMs20 })

    // RSS: renders so far count; top up to RSS_LATE and measure again.
    let rendered = RSS_EARLY + RSS_WARM_AGAIN + CPU_PAIRS * SEQUENTIAL_N + 1 + e2eAnswered
    const trail: string[] = [`${RSS_EARLY}: ${fmt(rssEarly, 0)}`]
    const topUp = async (to: number) => {
      while (rendered < to) {
        const n = Math.min(500, to - rendered)
        await run(n, CONCURRENCY)
        rendered += n
        await clearStored()
        trail.push(`${rendered}: ${fmt(rssAround(rendered), 0)}`)
      }
    }
    // The throughput rounds count their answers only when a round ends, so the late reading needs
    // renders counted one by one after them: at least 200 more when the rounds went past RSS_LATE.
    const lateAt = Math.max(RSS_LATE, rendered + 200)
    console.log(`worker RSS: up to ${lateAt} renders …`)
    await topUp(lateAt)
    await new Promise((r) => setTimeout(r, 1_000))
    const rssLate = rssAround(lateAt)

    // Longer invoices after the RSS readings, which they would move.
    for (const { lines, n } of LONG) {
      const body = JSON.stringify(invoiceOfLines(lines))
      console.log(`\n${lines}-line invoices: ${n} sequential, then the reference (load ${loadAverage().toFixed(2)}) …`)
      await one(body) // the first of a size warms the builder and the stores' buffers
      const c0 = cpuOf(pids)
      const r = await run(n, 1, body)
      const used = cpuDelta(c0, cpuOf(pids))
      await clearStored()
      // One thread, as ours rendered these one at a time.
      const raw = await reference.measure(Math.max(3_000, n * 400), lines, 1)
      cpuRows.push({ lines, ours: perInvoice(used, r.latencies.length || 1), raw: raw.cpuMsPerDoc, p50: median(r.latencies), rawWallMs: (raw.seconds * 1000) / raw.docs })
    }

    reference.child.stdin!.end()
    const rssDelta = (rssLate - rssEarly) / rssEarly
    const failedTotal = Object.values(failures).reduce((a, b) => a + b, 0)
    const rows: [string, string, string, string][] = [
      [`reference: pdfmake, same document definition, ${threads} threads in their own process`, medianRange(ref, 1), `${fmt(refMsPerDoc, 2)} ms/doc per thread`, ''],
      ['facturx render vs plain PDF, 20-line invoice', `${fmt(fx.facturxMs, 1)} vs ${fmt(fx.plainMs, 1)} ms/doc`, `${fmt(fx.ratio, 2)} × (target ≤ 2)`, fx.ratio <= 2 ? 'met' : 'MISSED'],
      ['  the same, every document different', `${fmt(fxv.facturxMs, 1)} vs ${fmt(fxv.plainMs, 1)} ms/doc`, `${fmt(fxv.ratio, 2)} ×`, fxv.ratio <= 2 ? 'met' : 'MISSED'],
      [
        `end to end, concurrency ${CONCURRENCY}, 1 worker process × ${threads} render threads`,
        medianRange(e2e, 1),
        `ratio ${ratio.text}, per thread the same (${threads} threads each side) (target ≥ 0.9)`,
        ratio.median >= 0.9 ? 'met' : 'MISSED',
      ],
      ['  latency under load p50 / p99 (median of the rounds)', `${fmt(median(e2e.rounds.map((r) => r.p50!)))} / ${fmt(e2e.p99!)} ms`, '', ''],
      ['  failed requests in the rounds', `${e2e.failed} ${describeFailures(e2e.failures)}`, '', e2e.failed ? 'counted' : ''],
      ['single request p50 (sequential)', `${fmt(seqP50, 1)} ms`, `raw render one at a time ${fmt(soloMs20, 1)} ms + 10 = ${fmt(soloMs20 + 10, 1)} ms`, seqP50 <= soloMs20 + 10 ? 'met' : 'MISSED'],
      ['  render time in the worker (median render_ms)', `${fmt(workerRenderMs, 1)} ms`, `overhead ${fmt(seqP50 - workerRenderMs, 1)} ms`, ''],
      [`worker RSS after ${RSS_EARLY} / ${fmt(lateAt, 0)} renders`, `${fmt(rssEarly)} / ${fmt(rssLate)} MB`, `${rssDelta >= 0 ? '+' : ''}${fmt(rssDelta * 100)} % (target within 10 %)`, Math.abs(rssDelta) <= 0.1 ? 'met' : 'MISSED'],
      ['failed requests outside the rounds (warm-up, sequential, RSS top-up)', `${failedTotal} ${describeFailures(failures)}`, `warm-up ${Object.values(warmupFailures).reduce((a, b) => a + b, 0)}, sequential ${seqFailed}`, ''],
    ]
    const total = (c: Record<string, number>) => Object.values(c).reduce((a, b) => a + b, 0)
    for (const c of cpuRows) {
      const t = total(c.ours)
      const parts = Object.entries(c.ours).map(([k, v]) => `${k} ${fmt(v, 1)}`).join(', ')
      const r20 = c.lines === 20 ? median(pairRatios) : t / c.raw
      const range20 = c.lines === 20 ? `, median of ${CPU_PAIRS} pairs (${fmt(Math.min(...pairRatios), 2)}–${fmt(Math.max(...pairRatios), 2)})` : ''
      rows.push([`CPU per invoice, ${c.lines} lines, sequential (${parts})`, `${fmt(t, 1)} vs raw ${fmt(c.raw, 1)} ms`, `${fmt(r20, 2)} ×${range20} (target ≤ 1.2)`, r20 <= 1.2 ? 'met' : 'MISSED'])
      rows.push([`  API process CPU per invoice, ${c.lines} lines`, `${fmt(c.ours.api!, 2)} ms`, c.lines === 20 ? 'target ≤ 2 ms' : '', c.lines === 20 ? (c.ours.api! <= 2 ? 'met' : 'MISSED') : ''])
      if (c.lines === 20) {
        rows.push([
          '  API floor: bare Koa, 1 MongoDB update, 1 Redis push, the PDF back by pub/sub (lib/api-floor.mjs), sequential',
          `${fmt(floor.cpuMs, 2)} ms CPU, p50 ${fmt(floor.p50Ms, 1)} ms`,
          `ours ${fmt(c.ours.api! / floor.cpuMs, 2)} × the floor`,
          '',
        ])
      }
      if (c.lines !== 20) rows.push([`  p50 of the ${c.lines}-line invoices`, `${fmt(c.p50, 0)} ms`, `raw render one at a time ${fmt(c.rawWallMs, 0)} ms`, ''])
    }
    const [c20, , c1000] = cpuRows
    if (c20 && c1000) {
      const lines = c1000.lines - c20.lines
      rows.push(['  cost per line (1,000 vs 20 lines)', `${fmt((total(c1000.ours) - total(c20.ours)) / lines, 3)} ms CPU`, `raw ${fmt((c1000.raw - c20.raw) / lines, 3)} ms`, ''])
    }
    console.log('\n| measurement | result | vs target | |\n|---|---|---|---|')
    for (const r of rows) console.log(`| ${r.join(' | ')} |`)
    console.log('\n(CPU from /proc in 10 ms ticks, summed over the sequential requests; Redis and MongoDB only when embedded by the bench)')
    console.log(`\nload average (1 min): ${loadRange(ref, e2e)} before the throughput rounds, ${seqLoad.toFixed(1)} before the sequential requests, ${loadAverage().toFixed(1)} at the end`)
    console.log(`rounds (load before → rate): ${[ref, e2e].map((s) => `${s.name} ${s.rounds.map((x) => `${x.load.toFixed(1)} → ${fmt(x.rate)}`).join(', ')}`).join('; ')}`)
    console.log(`\nworker RSS (MB) after n renders: ${trail.join(', ')}`)
    console.log(`\nMongoDB: ${usingEmbeddedMongo ? 'embedded engine' : 'MONGO_URL'}; Redis: ${process.env.REDIS_URL ? 'REDIS_URL' : 'embedded redis-server'}`)
  } finally {
    await cleanup()
  }
}

runBench(main)
