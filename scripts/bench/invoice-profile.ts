// Where an invoice's CPU goes (npm run bench:invoice-profile): one API process and one worker
// process spawned as in production, under `node --cpu-prof`; after a warm-up, N sequential
// invoices (BENCH_PROFILE_N, default 100) of BENCH_LINES lines (default 20, the invoice of
// lib/invoice-20.ts). Prints each process's CPU per invoice (/proc, the whole process tree: Redis
// and the MongoDB engine too), then each profile's self time per invoice by module and by function,
// counting only the samples taken while the N invoices ran (lib/cpu-profile-summary.ts). The
// profiles are left in the folder printed at the end (open them in Chrome DevTools). Uses
// REDIS_URL / MONGO_URL when set (then their CPU is not measured), else embedded ones.
import { runBench } from './lib/run.ts'
import { spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { Queue } from 'bullmq'
import { MongoClient } from 'mongodb'
import { Redis } from 'ioredis'
import { benchDir, benchPort, benchStores } from './lib/bench-env.ts'
import { fmt, loadAverage } from './lib/harness.ts'
import { invoiceOfLines } from './lib/invoice-20.ts'
import { cpuDelta, cpuOf } from './lib/proc-cpu.ts'
import { summarise } from './lib/cpu-profile-summary.ts'
import { renderInvoicePdf } from '../../src/invoice/pdf/thread-render-pdf.ts'
import { invoiceBodySchema } from '../../src/invoice/invoice-schema.ts'

const N = Number(process.env.BENCH_PROFILE_N ?? 100)
const LINES = Number(process.env.BENCH_LINES ?? 20)
const WARMUP = Number(process.env.BENCH_PROFILE_WARMUP ?? 200)
const TOP = Number(process.env.BENCH_PROFILE_TOP ?? 25)

const nowUs = () => Number(process.hrtime.bigint() / 1000n)

async function waitFor(what: string, fn: () => Promise<boolean>, timeoutMs = 90_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await fn().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 200))
  }
}

async function main(): Promise<void> {
  const stops: Array<() => Promise<void>> = []
  const children: ChildProcess[] = []
  const pids: Record<string, number> = {}
  const profDir = benchDir('cpuprof')
  try {
    const invoice = invoiceOfLines(LINES)
    console.log(`# invoice CPU profile: ${N} sequential invoices of ${LINES} lines, after ${WARMUP} warm-up (load ${loadAverage().toFixed(2)})\n`)

    // The raw render in this process, for scale: the same document definition, no queue.
    const request = invoiceBodySchema.parse(invoice)
    for (let i = 0; i < Math.max(20, N / 2); i++) await renderInvoicePdf(request, { today: '2026-11-21' })
    const c0 = process.cpuUsage()
    for (let i = 0; i < N; i++) await renderInvoicePdf(request, { today: '2026-11-21' })
    const c1 = process.cpuUsage(c0)
    const rawMs = (c1.user + c1.system) / 1000 / N

    const { redisUrl, mongoUrl } = await benchStores(stops, pids)
    const id = randomBytes(4).toString('hex')
    const port = await benchPort()
    const env = { ...process.env, NODE_ENV: 'production', LOG_LEVEL: 'warn', HOST: '127.0.0.1', INVOICE_PORT: String(port), REDIS_URL: redisUrl, MONGO_URL: mongoUrl, MONGO_DB: `prof_${id}`, QUEUE_PREFIX: `prof_${id}` }
    const role = (args: string[]) => spawn(process.execPath, ['--cpu-prof', '--cpu-prof-dir', profDir, '--import', 'tsx', 'src/main.ts', ...args], { env, stdio: ['ignore', 'inherit', 'inherit'] })
    const api = role(['api', '--service', 'invoice'])
    const worker = role(['worker', '--queues', 'invoice-render', '--concurrency', '8'])
    children.push(api, worker)
    pids.api = api.pid!
    pids.worker = worker.pid!

    const base = `http://127.0.0.1:${port}/api/v1`
    const queueConn = new Redis(redisUrl, { maxRetriesPerRequest: null })
    const queue = new Queue('invoice-render', { connection: queueConn, prefix: env.QUEUE_PREFIX })
    await waitFor('the API process', async () => (await fetch(`${base}/usage`)).status === 401)
    await waitFor('the worker process', async () => (await queue.getWorkersCount()) > 0)
    await queue.close()
    queueConn.disconnect()
    const mongo = await MongoClient.connect(mongoUrl)
    const email = `prof-${id}@example.com`
    const signup = await (await fetch(`${base}/signup`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email }) })).json()
    await mongo.db(env.MONGO_DB).collection('accounts').updateOne({ email }, { $set: { plan: 'business' } })
    await mongo.close()
    const headers = { 'content-type': 'application/json', authorization: `Bearer ${signup.api_key}` }
    const payload = JSON.stringify(invoice)
    const one = async () => {
      const r = await fetch(`${base}/invoice`, { method: 'POST', headers, body: payload })
      const buf = Buffer.from(await r.arrayBuffer())
      if (r.status !== 200 || buf.subarray(0, 5).toString() !== '%PDF-') throw new Error(`invoice answered ${r.status}: ${buf.toString().slice(0, 200)}`)
    }
    await waitFor('the first invoice served end to end', async () => (await one(), true), 120_000)
    const served = Date.now()
    for (let i = 0; i < WARMUP; i++) await one()
    // The render threads load the e-invoice libraries 20 s after the worker is ready
    // (pool-render-threads.ts): that start-up work must not fall into the window.
    while (Date.now() - served < 30_000) await one()
    await new Promise((r) => setTimeout(r, 500))

    const from = nowUs()
    const before = cpuOf(pids)
    const t = performance.now()
    for (let i = 0; i < N; i++) await one()
    const wallMs = (performance.now() - t) / N
    const used = cpuDelta(before, cpuOf(pids))
    const to = nowUs()

    for (const c of children) c.kill('SIGTERM')
    await Promise.all(children.map((c) => (c.exitCode !== null ? null : new Promise((r) => c.once('exit', r)))))
    children.length = 0

    const total = Object.values(used).reduce((a, b) => a + b, 0)
    console.log(`raw render in this process (same document definition): ${fmt(rawMs, 2)} ms CPU per invoice`)
    console.log(`end to end, sequential: ${fmt(wallMs, 2)} ms per invoice (wall); CPU per invoice (/proc, 10 ms ticks):`)
    for (const [name, ms] of Object.entries(used)) console.log(`  ${name.padEnd(7)} ${fmt(ms / N, 2)} ms`)
    console.log(`  total   ${fmt(total / N, 2)} ms = ${fmt(total / N / rawMs, 2)} × the raw render`)
    console.log('(the processes run under --cpu-prof, which adds its own sampling cost)')

    // CPU.<date>.<time>.<pid>.<thread>.<seq>.cpuprofile
    const names: Record<number, string> = { [api.pid!]: 'API', [worker.pid!]: 'worker' }
    for (const file of readdirSync(profDir).filter((f) => f.endsWith('.cpuprofile')).sort()) {
      const [, , , pid, tid] = file.split('.')
      const s = summarise(join(profDir, file), from, to)
      if (s.busyMs < N * 0.05) continue // a thread that did nothing in the window
      const who = `${names[Number(pid)] ?? pid} ${tid === '0' ? 'main thread' : `thread ${tid}`}`
      console.log(`\n## ${who}: ${fmt(s.busyMs / N, 2)} ms busy per invoice (${file})\n`)
      console.log('| module | ms per invoice |\n|---|---|')
      for (const [m, ms] of s.byModule.slice(0, TOP)) console.log(`| ${m} | ${fmt(ms / N, 3)} |`)
      console.log('\n| function (self time) | ms per invoice |\n|---|---|')
      for (const [f, ms] of s.byFunction.slice(0, TOP)) console.log(`| ${f} | ${fmt(ms / N, 3)} |`)
      console.log('\n| our function (inclusive: with what it called) | ms per invoice |\n|---|---|')
      for (const [f, ms] of s.ours.slice(0, TOP)) console.log(`| ${f} | ${fmt(ms / N, 3)} |`)
    }
    console.log(`\nprofiles: ${profDir}`)
  } finally {
    for (const c of children) if (c.exitCode === null) c.kill('SIGTERM')
    await Promise.all(children.map((c) => (c.exitCode !== null ? null : new Promise((r) => c.once('exit', r)))))
    for (const s of stops.reverse()) await s()
  }
}

runBench(main)
