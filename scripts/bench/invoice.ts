// Invoice benchmark (npm run bench:invoice). Reference, measured in the same run: pdfmake rendering
// the same 20-line invoice in a tight loop in this process. Then end to end over HTTP against one
// API process and one worker process (spawned as in production): sequential p50 latency vs render
// time + 15 ms, throughput at concurrency 8 over 500 invoices vs 0.6 × the reference, and worker
// RSS after 2,000 renders vs after 200. Uses REDIS_URL / MONGO_URL when set, else embedded ones.
import { runBench } from './lib/run.ts'
import { spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { Queue } from 'bullmq'
import getPort from 'get-port'
import { MongoClient } from 'mongodb'
import { Redis } from 'ioredis'
import { renderInvoicePdf } from '../../src/invoice/pdf/render.ts'
import type { InvoiceRequest } from '../../src/invoice/invoice-schema.ts'
import { startMongoEngine } from '../../src/platform/embedded/mongo-engine.ts'
import { startRedisServer } from '../../src/platform/embedded/redis-server.ts'
import { fmt } from './lib/http-load.ts'
import { readLayout } from '../../src/platform/partitioned.ts'
import { facturxVsPlain, varied } from './lib/facturx-render.ts'

const CONCURRENCY = 8
const THROUGHPUT_N = Number(process.env.BENCH_INVOICES ?? 500)
const RSS_EARLY = 200
const RSS_LATE = Number(process.env.BENCH_RSS_RENDERS ?? 2_000)
const SEQUENTIAL_N = 50

const invoice: InvoiceRequest = {
  invoice_number: 'BENCH-0001',
  date: '2026-11-21',
  due_date: '2026-12-21',
  from: { name: 'Acme Tools Ltd', address: '1 Forge Lane\nSheffield S1 2AB', email: 'billing@acme.test', phone: '+44 20 7946 0000' },
  to: { name: 'Globex Corporation', address: '500 Main St\nSpringfield', email: 'ap@globex.test' },
  items: Array.from({ length: 20 }, (_, i) => ({ description: `Consulting services, phase ${i + 1}`, quantity: (i % 4) + 1, unit_price: 95.5 + i })),
  tax_rate: 20,
  discount: 50,
  notes: 'Thank you for your business.',
  payment_info: 'Bank: First Test Bank\nIBAN: GB33 BUKB 2020 1555 5555 55',
  footer: 'Acme Tools Ltd · Registered in England No. 01234567',
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length ? s[Math.floor((s.length - 1) / 2)]! : NaN
}
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor((s.length * p) / 100))]!
}

async function reference(ms = 5_000): Promise<{ docsPerSec: number; msPerDoc: number }> {
  for (let i = 0; i < 30; i++) await renderInvoicePdf(invoice, { today: '2026-11-21' }) // warm up (JIT, fonts)
  let n = 0
  const start = performance.now()
  while (performance.now() - start < ms) {
    await renderInvoicePdf(invoice, { today: '2026-11-21' })
    n++
  }
  const elapsed = performance.now() - start
  return { docsPerSec: (n * 1000) / elapsed, msPerDoc: elapsed / n }
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
    let redisUrl = process.env.REDIS_URL
    if (!redisUrl) {
      const r = await startRedisServer({ appendonly: false })
      stops.push(() => r.child.stop())
      redisUrl = r.url
    }
    let mongoUrl = process.env.MONGO_URL
    if (!mongoUrl) {
      const m = await startMongoEngine()
      stops.push(() => m.child.stop())
      mongoUrl = m.url
    }
    if (usingEmbeddedMongo) {
      console.log('MongoDB: the EMBEDDED in-memory engine (MONGO_URL unset). Its writes slow down as a collection grows')
      console.log('(docs/embedded-store.md), so stored invoices are cleared between phases; set MONGO_URL for a real MongoDB.')
    } else console.log(`MongoDB: ${mongoUrl.replace(/\/\/[^@]*@/, '//***@')}`)

    console.log('\nreference: pdfmake, same 20-line invoice, tight loop in-process …')
    const ref = await reference()
    console.log(`  ${fmt(ref.docsPerSec)} docs/s (${fmt(ref.msPerDoc, 2)} ms per document)`)
    console.log('\nfacturx (PDF/A-3b + CII XML) vs plain PDF, same invoice, in-process …')
    const fx = await facturxVsPlain(invoice)
    console.log(`  plain ${fmt(fx.plainMs, 2)} ms, facturx ${fmt(fx.facturxMs, 2)} ms: ${fmt(fx.ratio, 2)} × (target ≤ 2)`)
    console.log('  … and with every document different (new words, amounts and number each time) …')
    const fxv = await facturxVsPlain(invoice, 10_000, varied)
    console.log(`  plain ${fmt(fxv.plainMs, 2)} ms, facturx ${fmt(fxv.facturxMs, 2)} ms: ${fmt(fxv.ratio, 2)} ×`)

    const id = randomBytes(4).toString('hex')
    const port = await getPort({ host: '127.0.0.1', exclude: [3001, 3002, 3003] })
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
    const api = spawnRole(['api', '--service', 'invoice'], env)
    const worker = spawnRole(['worker', '--queues', 'invoice-render', '--concurrency', String(CONCURRENCY)], env)
    children.push(api, worker)
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

    const one = async (): Promise<number> => {
      const t = performance.now()
      const r = await fetch(`${base}/invoice`, { method: 'POST', headers, body: payload })
      const buf = Buffer.from(await r.arrayBuffer())
      if (r.status !== 200 || buf.subarray(0, 5).toString() !== '%PDF-') throw new Error(`invoice failed: ${r.status} ${buf.toString().slice(0, 200)}`)
      return performance.now() - t
    }
    const run = async (n: number, concurrency: number): Promise<{ wallMs: number; latencies: number[] }> => {
      let next = 0
      const latencies: number[] = []
      const t = performance.now()
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          while (next < n) {
            next++
            latencies.push(await one())
            answered++
          }
        }),
      )
      return { wallMs: performance.now() - t, latencies }
    }

    // Warm-up: the render threads' JIT gets what the reference's tight loop gets before it is
    // timed, and its renders are the first RSS_EARLY of the RSS measurement.
    console.log(`\nwarm-up: ${RSS_EARLY} invoices …`)
    await run(RSS_EARLY, CONCURRENCY)
    await clearStored()
    await new Promise((r) => setTimeout(r, 1_000))
    const rssEarly = rssAround(RSS_EARLY)

    console.log(`single requests: ${SEQUENTIAL_N} sequential …`)
    const seq = await run(SEQUENTIAL_N, 1)
    const workerRenderMs = median((await (await readLayout(db, 'invoices')).findAll({ status: 'done' })).map((d) => d.render_ms as number))
    await clearStored()
    const seqP50 = median(seq.latencies)

    console.log(`throughput: ${THROUGHPUT_N} invoices at concurrency ${CONCURRENCY} …`)
    const tp = await run(THROUGHPUT_N, CONCURRENCY)
    const e2eRate = (THROUGHPUT_N * 1000) / tp.wallMs
    await clearStored()

    // RSS: renders so far count; top up to RSS_LATE and measure again.
    let rendered = RSS_EARLY + SEQUENTIAL_N + THROUGHPUT_N
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
    console.log(`worker RSS: up to ${RSS_LATE} renders …`)
    await topUp(RSS_LATE)
    await new Promise((r) => setTimeout(r, 1_000))
    const rssLate = rssAround(RSS_LATE)

    const ratio = e2eRate / ref.docsPerSec
    const rssDelta = (rssLate - rssEarly) / rssEarly
    const rows: [string, string, string, string][] = [
      ['reference: pdfmake in-process, 20-line invoice', `${fmt(ref.docsPerSec)} docs/s`, `${fmt(ref.msPerDoc, 2)} ms/doc`, ''],
      ['facturx render vs plain PDF, 20-line invoice', `${fmt(fx.facturxMs, 1)} vs ${fmt(fx.plainMs, 1)} ms/doc`, `${fmt(fx.ratio, 2)} × (target ≤ 2)`, fx.ratio <= 2 ? 'met' : 'MISSED'],
      ['  the same, every document different', `${fmt(fxv.facturxMs, 1)} vs ${fmt(fxv.plainMs, 1)} ms/doc`, `${fmt(fxv.ratio, 2)} ×`, fxv.ratio <= 2 ? 'met' : 'MISSED'],
      [`end to end, concurrency ${CONCURRENCY}, ${THROUGHPUT_N} invoices`, `${fmt(e2eRate)} invoices/s`, `ratio ${fmt(ratio, 2)} (target ≥ 0.6)`, ratio >= 0.6 ? 'met' : 'MISSED'],
      ['  latency under load p50 / p99', `${fmt(median(tp.latencies))} / ${fmt(pct(tp.latencies, 99))} ms`, '', ''],
      ['single request p50 (sequential)', `${fmt(seqP50, 1)} ms`, `render ${fmt(ref.msPerDoc, 1)} ms + 15 = ${fmt(ref.msPerDoc + 15, 1)} ms`, seqP50 <= ref.msPerDoc + 15 ? 'met' : 'MISSED'],
      ['  render time in the worker (median render_ms)', `${fmt(workerRenderMs, 1)} ms`, `overhead ${fmt(seqP50 - workerRenderMs, 1)} ms`, ''],
      [`worker RSS after ${RSS_EARLY} / ${fmt(RSS_LATE, 0)} renders`, `${fmt(rssEarly)} / ${fmt(rssLate)} MB`, `${rssDelta >= 0 ? '+' : ''}${fmt(rssDelta * 100)} % (target within 10 %)`, Math.abs(rssDelta) <= 0.1 ? 'met' : 'MISSED'],
    ]
    console.log('\n| measurement | result | vs target | |\n|---|---|---|---|')
    for (const r of rows) console.log(`| ${r.join(' | ')} |`)
    console.log(`\nworker RSS (MB) after n renders: ${trail.join(', ')}`)
    console.log(`\nMongoDB: ${usingEmbeddedMongo ? 'embedded engine' : 'MONGO_URL'}; Redis: ${process.env.REDIS_URL ? 'REDIS_URL' : 'embedded redis-server'}`)
  } finally {
    await cleanup()
  }
}

runBench(main)
