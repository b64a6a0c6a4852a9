// Webhook live-stream benchmark (docs/webhooks.md, "Live stream"), run by `npm run bench:webhooks`
// after the capture
// benchmark, or alone: `npm run bench:webhooks-live [-- --duration 5 --streams 1000 --no-write]`.
//  1. capture → event latency: 100 captures/s to one endpoint, one stream open on it; p50 of
//     (event received − capture sent) (target ≤ 100 ms);
//  2. 1,000 open streams on one API process: the API runs as its own process
//     (`src/main.ts api --service webhooks`, as in production) so its RSS is its own; RSS before
//     and with the streams open, and the latency again at 100 captures/s spread over the
//     streamed endpoints while all streams are open.
// Uses REDIS_URL / MONGO_URL when set, else starts the embedded Redis and MongoDB engine.
// Appends its results to docs/benchmarks.md (replacing its own earlier section).
import { benchMongo, benchPort, benchRedis } from './lib/bench-env.ts'
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import os from 'node:os'
import { parseArgs } from 'node:util'
import { createAccount, setPlan } from '../../src/platform/accounts.ts'
import { loadConfig } from '../../src/platform/config.ts'
import { createPlatform } from '../../src/platform/platform.ts'
import { ALL_INDEXES } from '../../src/collections.ts'
import { openStream } from '../listen/stream.ts'
import { writeBenchSection } from './lib/report.ts'
import { fmt } from './lib/http-load.ts'

const { values } = parseArgs({
  options: { duration: { type: 'string', default: '5' }, streams: { type: 'string', default: '1000' }, 'no-write': { type: 'boolean', default: false } },
})
const DURATION = Number(values.duration)
const STREAMS = Number(values.streams)
const RATE = 100
const ENDPOINTS = 100
const SECTION = '## Webhook live stream'

const stops: Array<() => Promise<void>> = []
const redisUrl: string = process.env.REDIS_URL ?? (await benchRedis().then((r) => (stops.push(() => r.child.stop()), r.url as string)))
const mongoUrl: string = process.env.MONGO_URL ?? (await benchMongo().then((m) => (stops.push(() => m.child.stop()), m.url as string)))
const storage = process.env.MONGO_URL ? 'MongoDB (MONGO_URL)' : 'embedded engine (jongodb)'
const env = { LOG_LEVEL: 'silent', MONGO_DB: `bench_live_${Date.now()}`, QUEUE_PREFIX: `bl${Date.now()}`, REDIS_URL: redisUrl, MONGO_URL: mongoUrl }
const config = loadConfig({ ...process.env, ...env })
const platform = await createPlatform({ config, redisUrl, mongoUrl, indexes: ALL_INDEXES })

const port = await benchPort()
const api = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'api', '--service', 'webhooks'], {
  env: { ...process.env, ...env, WEBHOOKS_PORT: String(port), HOST: '127.0.0.1' },
  stdio: ['ignore', 'ignore', 'inherit'],
})
const base = `http://127.0.0.1:${port}`
for (let i = 0; ; i++) {
  if ((await fetch(`${base}/healthz`).catch(() => null))?.ok) break
  if (i > 300) throw new Error('the API process did not start')
  await new Promise((r) => setTimeout(r, 100))
}
const rssKiB = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${api.pid}/status`, 'utf8'))![1])

const { account, apiKey: key } = await createAccount(platform.db, 'webhooks', `bench-live-${Date.now()}@example.com`)
await setPlan(platform.db, account._id, 'business')
const tokens: string[] = []
for (let i = 0; i < ENDPOINTS; i++) {
  const r = await fetch(`${base}/api/v1/endpoints`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: '{}' })
  tokens.push(((await r.json()) as { endpoint_id: string }).endpoint_id)
}

/** Send RATE captures/s over `targets` for DURATION s; p50/p95/p99 of capture sent → first event received. */
async function latency(targets: string[], received: Map<string, number>) {
  const sent = new Map<string, number>()
  const answered = new Map<string, number>()
  const total = RATE * DURATION
  await new Promise<void>((resolve) => {
    let i = 0
    const t = setInterval(() => {
      const id = `b${i}`
      sent.set(id, performance.now())
      fetch(`${base}/hook/${targets[i % targets.length]}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ bench: id }) })
        .then((r) => r.arrayBuffer())
        .then(() => answered.set(id, performance.now()))
      if (++i >= total) {
        clearInterval(t)
        resolve()
      }
    }, 1000 / RATE)
  })
  const deadline = Date.now() + 30_000
  while ([...sent.keys()].some((id) => !received.has(id)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100))
  const lat = [...sent].filter(([id]) => received.has(id)).map(([id, t0]) => received.get(id)! - t0).sort((a, b) => a - b)
  const pct = (p: number) => lat[Math.min(lat.length - 1, Math.floor((p / 100) * lat.length))] ?? NaN
  // How much of it the stream adds: event received − the capture's own 200 (storage excluded).
  const extra = [...answered].filter(([id]) => received.has(id)).map(([id, t]) => received.get(id)! - t).sort((a, b) => a - b)
  const stored = [...answered].map(([id, t]) => t - sent.get(id)!).sort((a, b) => a - b)
  const mid = (xs: number[]) => xs[Math.floor(xs.length / 2)] ?? NaN
  return { n: lat.length, total, p50: pct(50), p95: pct(95), p99: pct(99), afterAnswer: mid(extra), capture: mid(stored) }
}

const received = new Map<string, number>()
const onEvent = (ev: { event?: string; data: string }) => {
  if (ev.event !== 'capture') return
  const c = JSON.parse(ev.data) as { body: string }
  const id = (JSON.parse(c.body) as { bench: string }).bench
  if (!received.has(id)) received.set(id, performance.now())
}
const aborts: AbortController[] = []
async function open(token: string) {
  const ac = new AbortController()
  aborts.push(ac)
  const s = openStream({ api: base, token, key, signal: ac.signal, onEvent })
  s.ended.catch(() => undefined)
  await s.opened
}

// 1. One stream, 100 captures/s.
const load1 = os.loadavg()[0]!
await open(tokens[0]!)
const one = await latency([tokens[0]!], received)
aborts.splice(0).forEach((a) => a.abort())

// 2. STREAMS streams spread over ENDPOINTS endpoints.
await new Promise((r) => setTimeout(r, 1_000))
const rssBefore = rssKiB()
for (let i = 0; i < STREAMS; i += 50) await Promise.all(Array.from({ length: Math.min(50, STREAMS - i) }, (_, j) => open(tokens[(i + j) % ENDPOINTS]!)))
await new Promise((r) => setTimeout(r, 2_000))
const rssOpen = rssKiB()
received.clear()
const many = await latency(tokens.slice(0, 10), received)
const rssAfter = rssKiB()
const load2 = os.loadavg()[0]!

const mib = (k: number) => `${(k / 1024).toFixed(0)} MiB`
const lines = [
  SECTION,
  '',
  `Run ${new Date().toISOString().slice(0, 16)}Z on ${os.cpus().length} cores (${os.cpus()[0]?.model ?? 'cpu'}), load average ${load1.toFixed(2)} at the start and ${load2.toFixed(2)} at the end ` +
    `(the machine is shared), storage: **${storage}**, Redis pub/sub. The API is its own process (\`src/main.ts api --service webhooks\`); the streams are read by the benchmark process with fetch. \`npm run bench:webhooks-live\` (also run by \`npm run bench:webhooks\`).`,
  '',
  '| measure | result | target |',
  '|---|---|---|',
  `| capture → event on a connected stream, ${RATE} captures/s × ${DURATION} s, 1 stream (${one.n}/${one.total} received) | p50 **${fmt(one.p50)} ms**, p95 ${fmt(one.p95)} ms, p99 ${fmt(one.p99)} ms; the capture's own answer p50 ${fmt(one.capture)} ms, event − answer p50 ${fmt(one.afterAnswer)} ms | p50 ≤ 100 ms |`,
  `| API process RSS, no stream → ${STREAMS} open streams (${ENDPOINTS} endpoints) | ${mib(rssBefore)} → **${mib(rssOpen)}** (${((rssOpen - rssBefore) / STREAMS).toFixed(1)} KiB per stream) | bounded |`,
  `| capture → event with ${STREAMS} streams open, ${RATE} captures/s over 10 endpoints (each event to ${STREAMS / ENDPOINTS} streams; ${many.n}/${many.total} received) | p50 **${fmt(many.p50)} ms**, p95 ${fmt(many.p95)} ms, p99 ${fmt(many.p99)} ms; the capture's own answer p50 ${fmt(many.capture)} ms, event − answer p50 ${fmt(many.afterAnswer)} ms | p50 ≤ 100 ms |`,
  `| API process RSS after that load | ${mib(rssAfter)} | bounded |`,
  '',
  'Memory per stream is bounded by design: one Redis subscriber per API process (channels are shared), a per-stream buffer cut off at 4 MiB (a slow client is ' +
    'disconnected and resumes from MongoDB with Last-Event-ID), and bodies over 64 KiB left out of events. ' +
    '"event − answer" is the time the stream adds after the capture was stored and answered.',
  '',
]
const report = lines.join('\n')
console.log(report)
if (!values['no-write']) writeBenchSection(report)

aborts.forEach((a) => a.abort())
api.kill('SIGTERM')
await new Promise((r) => api.once('exit', r))
await platform.close()
for (const s of stops) await s()
process.exit(0)
