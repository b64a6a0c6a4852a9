// Checks the capacity model (scripts/capacity/model.ts) against this machine: measures each
// process's CPU per request in a calibration stretch (1 worker, 1 API replica, moderate load),
// predicts from those demands and the cores alone the throughput of 1 and 2 worker processes
// (20-line invoices) and of 1 and 2 flags API replicas (evaluate over HTTP), then measures each at
// saturation. Target: every prediction within 20 % of the measured median. `npm run bench:capacity-check`;
// results in docs/benchmarks.md ("Capacity model check") and docs/capacity/measured-here.json.
import { spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { readFileSync, readdirSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import { createInterface } from 'node:readline'
import { Queue } from 'bullmq'
import { Redis } from 'ioredis'
import { MongoClient, type Db } from 'mongodb'
import type { Platform } from '../../src/platform/platform.ts'
import { readLayout } from '../../src/platform/store/partitioned.ts'
import { predict, type Part } from '../capacity/model.ts'
import { benchPort, benchStores } from './lib/bench-env.ts'
import { seedFlags } from './lib/flags-setup.ts'
import { fmt, loadAverage, machineCpuMs, median } from './lib/harness.ts'
import { invoice20 } from './lib/invoice-20.ts'
import { treeCpuMs } from './lib/proc-cpu.ts'
import { runBench } from './lib/run.ts'

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const SECONDS = Number(process.env.BENCH_ROUND_SECONDS ?? 6)
const CORES = os.availableParallelism()
const TICK = 10

const threadCpu = (pid: number): Map<number, number> => {
  const out = new Map<number, number>()
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      const s = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8')
      const f = s.slice(s.lastIndexOf(')') + 2).split(' ')
      out.set(Number(tid), (Number(f[11]) + Number(f[12])) * TICK)
    }
  } catch {
    // gone
  }
  return out
}

/** CPU of the named process trees, of one worker's threads, of this process, and of the machine. */
function snapshot(pids: Record<string, number>, threadsOf: number[]) {
  const u = process.cpuUsage()
  return {
    trees: Object.fromEntries(Object.entries(pids).map(([n, p]) => [n, treeCpuMs(p)])),
    threads: threadsOf.map(threadCpu),
    self: (u.user + u.system) / 1000,
    machine: machineCpuMs(),
    at: performance.now(),
  }
}
type Snap = ReturnType<typeof snapshot>

/** Cores our processes used during a stretch. */
const oursCores = (a: Snap, b: Snap) => (Object.keys(a.trees).reduce((s, n) => s + (b.trees[n]! - a.trees[n]!), 0) + (b.self - a.self)) / (b.at - a.at)

/** Cores other processes left us during a stretch: the machine's busy time less ours. */
function availableCores(a: Snap, b: Snap): number {
  const others = (b.machine - a.machine) / (b.at - a.at) - oursCores(a, b)
  return Math.max(0.1, Math.min(CORES, CORES - Math.max(0, others)))
}

function spawnRole(args: string[], env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'inherit', 'inherit'] })
}

async function waitFor(what: string, fn: () => Promise<boolean>, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await fn().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 200))
  }
}

async function redisCommands(redis: Redis): Promise<number> {
  const info = await redis.info('commandstats')
  return [...info.matchAll(/calls=(\d+)/g)].reduce((s, m) => s + Number(m[1]), 0)
}

/** Writes the engine has counted (serverStatus opcounters), or NaN where it does not say. */
async function mongoWrites(db: Db): Promise<number> {
  try {
    const s = await db.admin().command({ serverStatus: 1 })
    const o = s.opcounters ?? {}
    return Number(o.insert ?? NaN) + Number(o.update ?? 0) + Number(o.delete ?? 0)
  } catch {
    return NaN
  }
}

interface Check {
  what: string
  predicted: number
  bottleneck: string
  measured: number[]
  cores: number[]
}
const within = (c: Check) => Math.abs(c.predicted / median(c.measured) - 1)

// ---------------------------------------------------------------- the load generator for flags

/** One autocannon process per API replica (lib/load-child.mjs), so the generator scales with them. */
function generator(): { pid: number; run(opts: object): Promise<{ ok: number; seconds: number; cpuMs: number; non2xx: number; errors: number; statuses?: Record<string, number> }>; close(): void } {
  const child = spawn(process.execPath, ['scripts/bench/lib/load-child.mjs'], { stdio: ['pipe', 'pipe', 'inherit'] })
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]()
  return {
    pid: child.pid!,
    async run(opts) {
      child.stdin!.write(JSON.stringify(opts) + '\n')
      const r = JSON.parse(String((await lines.next()).value))
      if (r.error) throw new Error(r.error)
      return r
    },
    close: () => void child.stdin!.end(),
  }
}

async function main(): Promise<void> {
  const stops: Array<() => Promise<void>> = []
  const children: ChildProcess[] = []
  const cleanup = async () => {
    for (const c of children) if (c.exitCode === null) c.kill('SIGTERM')
    await Promise.all(children.map((c) => (c.exitCode !== null ? null : new Promise((r) => c.once('exit', r)))))
    for (const s of stops.reverse()) await s()
  }
  process.once('SIGINT', () => void cleanup().then(() => process.exit(130)))
  const checks: Check[] = []
  const demands: Record<string, Record<string, number>> = {}
  try {
    console.log(`# capacity model check\n\ncpus: ${CORES}, node ${process.version}, ${ROUNDS} rounds of ${SECONDS} s per configuration, load ${loadAverage().toFixed(2)}`)
    const pids: Record<string, number> = {}
    const { redisUrl, mongoUrl } = await benchStores(stops, pids)
    const redis = new Redis(redisUrl)
    const mongo = await MongoClient.connect(mongoUrl)
    stops.push(async () => (redis.disconnect(), await mongo.close()))

    // ------------------------------------------------------------ invoices: 1 and 2 worker processes
    const id = randomBytes(4).toString('hex')
    const port = await benchPort()
    // One render thread per worker, so that a worker's render thread is one core and 2 workers can use 2.
    const env = { NODE_ENV: 'production', LOG_LEVEL: 'warn', HOST: '127.0.0.1', INVOICE_PORT: String(port), REDIS_URL: redisUrl, MONGO_URL: mongoUrl, MONGO_DB: `cap_${id}`, QUEUE_PREFIX: `cap_${id}`, RENDER_CONCURRENCY: '1' }
    const workerArgs = ['worker', '--queues', 'invoice-render', '--concurrency', '2']
    const api = spawnRole(['api', '--service', 'invoice'], env)
    const workers = [spawnRole(workerArgs, env)]
    children.push(api, ...workers)
    const base = `http://127.0.0.1:${port}/api/v1`
    const queueConn = new Redis(redisUrl, { maxRetriesPerRequest: null })
    const queue = new Queue('invoice-render', { connection: queueConn, prefix: env.QUEUE_PREFIX })
    stops.push(async () => (await queue.close(), queueConn.disconnect()))
    await waitFor('the invoice API', async () => (await fetch(`${base}/usage`)).status === 401)
    const db = mongo.db(env.MONGO_DB)
    const email = `cap-${id}@example.com`
    const signup = await (await fetch(`${base}/signup`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email }) })).json()
    await db.collection('accounts').updateOne({ email }, { $set: { plan: 'business' } })
    const headers = { 'content-type': 'application/json', authorization: `Bearer ${signup.api_key}` }
    const body = JSON.stringify(invoice20)
    await waitFor('the first invoice', async () => (await fetch(`${base}/invoice`, { method: 'POST', headers, body })).status === 200)
    // The embedded engine's writes slow as a collection grows: every stretch starts from an empty one.
    const clear = async () => (await readLayout(db, 'invoices')).deleteMany({})
    const failures: Record<string, number> = {}
    const fail = (kind: string, k = 1) => (failures[kind] = (failures[kind] ?? 0) + k)
    const invoices = async (opts: { n?: number; ms?: number; concurrency: number }): Promise<number> => {
      let done = 0
      let started = 0
      const until = opts.ms ? performance.now() + opts.ms : Infinity
      await Promise.all(
        Array.from({ length: opts.concurrency }, async () => {
          while (performance.now() < until && started < (opts.n ?? Infinity)) {
            started++
            const r = await fetch(`${base}/invoice`, { method: 'POST', headers, body }).catch(() => null)
            if (r?.status === 200 && (await r.arrayBuffer()).byteLength > 0) done++
            else fail(`invoice ${r?.status ?? 'error'}`)
          }
        }),
      )
      return done
    }
    // As bench:invoice: nothing is measured until 30 s after the first invoice, once the worker's
    // e-invoice warm-up (20 s after its start) is over. The run of 2026-11-28 calibrated without this
    // wait, and its demands came out ~30 % above the CPU per invoice of the measured rounds.
    const WARM_S = Number(process.env.CAPACITY_WARM_SECONDS ?? 30)
    console.log(`\nwaiting ${WARM_S} s for the worker's warm-up, then 300 invoices …`)
    await new Promise((r) => setTimeout(r, WARM_S * 1000))
    await invoices({ n: 300, concurrency: 4 })
    await clear()

    // Calibration: 1 worker, 8 clients, 300 invoices (a separate stretch from the measured ones).
    const n = 300
    const wpid = workers[0]!.pid!
    const calPids = { api: api.pid!, worker: wpid, redis: pids.redis!, mongo: pids.mongo! }
    const cmd0 = await redisCommands(redis)
    const w0 = await mongoWrites(db)
    const a = snapshot(calPids, [wpid])
    const done = await invoices({ n, concurrency: 8 })
    const b = snapshot(calPids, [wpid])
    const per = (k: string) => (b.trees[k]! - a.trees[k]!) / done
    const tdelta = [...b.threads[0]!].map(([tid, ms]) => [tid, ms - (a.threads[0]!.get(tid) ?? 0)] as const)
    const main = tdelta.find(([tid]) => tid === wpid)?.[1] ?? 0
    const render = Math.max(...tdelta.filter(([tid]) => tid !== wpid).map(([, ms]) => ms))
    const inv = {
      api: per('api'),
      workerMain: main / done,
      renderThread: render / done,
      workerOther: per('worker') - (main + render) / done,
      redis: per('redis'),
      mongo: per('mongo'),
      client: (b.self - a.self) / done,
      redisCommands: ((await redisCommands(redis)) - cmd0) / done,
      mongoWrites: ((await mongoWrites(db)) - w0) / done,
      calibrationPerSecond: done / ((b.at - a.at) / 1000),
    }
    demands.invoice20 = inv
    console.log(`calibration (${done} invoices, ${fmt(inv.calibrationPerSecond)}/s): CPU ms per invoice: API ${fmt(inv.api, 2)}, worker main ${fmt(inv.workerMain, 2)}, render thread ${fmt(inv.renderThread, 2)}, worker other threads ${fmt(inv.workerOther, 2)}, Redis ${fmt(inv.redis, 2)} (${fmt(inv.redisCommands)} commands), MongoDB engine ${fmt(inv.mongo, 2)} (writes: ${fmt(inv.mongoWrites)}), client ${fmt(inv.client, 2)}`)
    await clear()

    const invoiceParts = (workersN: number): Record<string, Part> => ({
      'API event loop': { demandMs: inv.api, instances: 1, coresEach: 1 },
      'worker event loops': { demandMs: inv.workerMain, instances: workersN, coresEach: 1 },
      'render threads': { demandMs: inv.renderThread, instances: workersN, coresEach: 1 },
      'worker other threads': { demandMs: Math.max(0, inv.workerOther), instances: workersN, coresEach: Infinity },
      Redis: { demandMs: inv.redis, instances: 1, coresEach: 1 },
      'MongoDB engine': { demandMs: inv.mongo, instances: 1, coresEach: Infinity },
      'load client': { demandMs: inv.client, instances: 1, coresEach: 1 },
    })
    for (const workersN of [1, 2]) {
      if (workersN === 2) {
        const w = spawnRole(workerArgs, env)
        workers.push(w)
        children.push(w)
        await waitFor('the second worker', async () => (await queue.getWorkersCount()) >= 2)
        await new Promise((r) => setTimeout(r, WARM_S * 1000))
        await invoices({ n: 100, concurrency: 8 })
        await clear()
      }
      const all = { ...calPids, ...Object.fromEntries(workers.map((w, i) => [`worker${i}`, w.pid!])) }
      delete (all as Record<string, number>).worker
      const c: Check = { what: `${workersN} worker process${workersN > 1 ? 'es' : ''}, 20-line invoices`, predicted: 0, bottleneck: '', measured: [], cores: [] }
      for (let r = 0; r < ROUNDS; r++) {
        const s0 = snapshot(all, [])
        const got = await invoices({ ms: SECONDS * 1000, concurrency: 16 })
        const s1 = snapshot(all, [])
        c.measured.push(got / ((s1.at - s0.at) / 1000))
        c.cores.push(availableCores(s0, s1))
        console.log(`  ${c.what}, round ${r + 1} (load ${loadAverage().toFixed(2)}): ${fmt(c.measured.at(-1)!)} invoices/s, ${fmt(c.cores.at(-1)!, 2)} cores left to us, ${fmt(oursCores(s0, s1), 2)} used`)
        await clear()
      }
      const p = predict(invoiceParts(workersN), median(c.cores))
      Object.assign(c, { predicted: p.throughput, bottleneck: p.bottleneck })
      checks.push(c)
    }
    for (const w of [...workers, api]) w.kill('SIGTERM')

    // ------------------------------------------------------------ flags: 1 and 2 API replicas
    const fports = [await benchPort(), await benchPort()]
    const fenv = (p: number) => ({ ...env, MONGO_DB: `capf_${id}`, QUEUE_PREFIX: `capf_${id}`, FLAGS_PORT: String(p) })
    const replicas = [spawnRole(['api', '--service', 'flags'], fenv(fports[0]!))]
    children.push(replicas[0]!)
    const fbase = (p: number) => `http://127.0.0.1:${p}`
    await waitFor('the flags API', async () => (await fetch(`${fbase(fports[0]!)}/healthz`)).ok)
    // Three accounts of 10 SDK keys: each key stays under the business plan's per-key rate at the rates reached here.
    const requests: Awaited<ReturnType<typeof seedFlags>> = []
    for (let k = 0; k < 3; k++) requests.push(...(await seedFlags({ db: mongo.db(`capf_${id}`) } as Platform, `${fbase(fports[0]!)}/api/v1`)))
    const gens = [generator(), generator()]
    stops.push(async () => gens.forEach((g) => g.close()))
    const load = (p: number, connections: number, seconds: number) => ({ url: fbase(p), requests, connections, duration: seconds, timeout: 10 })
    await gens[0]!.run(load(fports[0]!, 16, 3))
    const fpids = { api: replicas[0]!.pid!, redis: pids.redis!, mongo: pids.mongo!, gen: gens[0]!.pid }
    const fa = snapshot(fpids, [])
    const cal = await gens[0]!.run(load(fports[0]!, 16, SECONDS))
    const fb = snapshot(fpids, [])
    const fper = (k: string) => (fb.trees[k]! - fa.trees[k]!) / cal.ok
    const ev = { api: fper('api'), generator: fper('gen'), redis: fper('redis'), mongo: fper('mongo'), calibrationPerSecond: cal.ok / cal.seconds }
    demands.flagsEvaluate = ev
    console.log(`\ncalibration (${cal.ok} evaluate requests, ${fmt(ev.calibrationPerSecond)}/s): CPU ms per request: API ${fmt(ev.api, 3)}, load generator ${fmt(ev.generator, 3)}, Redis ${fmt(ev.redis, 3)}, MongoDB engine ${fmt(ev.mongo, 3)}`)
    for (const replicasN of [1, 2]) {
      if (replicasN === 2) {
        replicas.push(spawnRole(['api', '--service', 'flags'], fenv(fports[1]!)))
        children.push(replicas[1]!)
        await waitFor('the second flags replica', async () => (await fetch(`${fbase(fports[1]!)}/healthz`)).ok)
        await gens[1]!.run(load(fports[1]!, 16, 3))
      }
      const all = { ...Object.fromEntries(replicas.map((r, i) => [`api${i}`, r.pid!])), redis: pids.redis!, mongo: pids.mongo!, ...Object.fromEntries(gens.map((g, i) => [`gen${i}`, g.pid])) }
      const c: Check = { what: `${replicasN} flags API replica${replicasN > 1 ? 's' : ''}, evaluate over HTTP`, predicted: 0, bottleneck: '', measured: [], cores: [] }
      for (let r = 0; r < ROUNDS; r++) {
        const s0 = snapshot(all, [])
        const results = await Promise.all(replicas.map((_, i) => gens[i]!.run(load(fports[i]!, 64 / replicasN, SECONDS))))
        const s1 = snapshot(all, [])
        for (const x of results) {
          for (const [code, k] of Object.entries(x.statuses ?? {})) fail(`evaluate ${code}`, k)
          if (x.errors) fail('evaluate errors', x.errors)
        }
        c.measured.push(results.reduce((s, x) => s + x.ok / x.seconds, 0))
        c.cores.push(availableCores(s0, s1))
        console.log(`  ${c.what}, round ${r + 1} (load ${loadAverage().toFixed(2)}): ${fmt(c.measured.at(-1)!)} requests/s, ${fmt(c.cores.at(-1)!, 2)} cores left to us, ${fmt(oursCores(s0, s1), 2)} used`)
      }
      const parts: Record<string, Part> = {
        'API event loops': { demandMs: ev.api, instances: replicasN, coresEach: 1 },
        'load generators': { demandMs: ev.generator, instances: replicasN, coresEach: 1 },
        Redis: { demandMs: ev.redis, instances: 1, coresEach: 1 },
        'MongoDB engine': { demandMs: ev.mongo, instances: 1, coresEach: Infinity },
      }
      const p = predict(parts, median(c.cores))
      Object.assign(c, { predicted: p.throughput, bottleneck: p.bottleneck })
      checks.push(c)
    }

    console.log('\n| configuration | predicted | measured, median (range) | cores left to us | prediction / measured | bottleneck (model) |\n|---|---|---|---|---|---|')
    for (const c of checks) {
      const m = median(c.measured)
      console.log(`| ${c.what} | ${fmt(c.predicted)}/s | ${fmt(m)}/s (${fmt(Math.min(...c.measured))}–${fmt(Math.max(...c.measured))}) | ${fmt(median(c.cores), 2)} | ${fmt(c.predicted / m, 2)} | ${c.bottleneck} |`)
    }
    const worst = Math.max(...checks.map(within))
    console.log(`\nworst deviation: ${fmt(worst * 100)} % (target ≤ 20 %): ${worst <= 0.2 ? 'met' : 'MISSED'}; failed requests: ${JSON.stringify(failures)}`)
    writeFileSync('docs/capacity/measured-here.json', JSON.stringify({ date: new Date().toISOString(), cores: CORES, demands, checks: checks.map((c) => ({ ...c, measuredMedian: median(c.measured) })) }, null, 2) + '\n')
  } finally {
    await cleanup()
  }
}

runBench(main)
