// Flag change-stream benchmark (docs/flags-evaluation.md, "Change stream"): `npm run bench:flags-stream [--
// --streams 2000 --rounds 10 --no-write]`.
// One flags API process (`src/main.ts api --service flags`, as in production, so its RSS is its
// own) holds STREAMS open change streams (GET /ofrep/v1/stream) of one project; a flag is changed
// ROUNDS times through the API, and each stream's event is timed from the moment the change was
// sent: fan-out p50 / p99 / max over all streams and rounds, RSS per 1,000 streams. The reference,
// measured in the same run by the same client code: a bare node:http SSE server (lib/bare-sse.ts)
// holding the same number of streams and writing one event to all of them per round (no change to
// store, no pub/sub, no flag set to reload). Target: every stream told within 1 s. One change per
// side warms up first (not counted); a refused stream or a missed event is counted, not fatal.
// Uses REDIS_URL / MONGO_URL when set, else starts the embedded Redis and MongoDB engine.
// Appends its results to docs/benchmarks.md (replacing its own earlier section).
import { benchMongo, benchPort, benchRedis } from './lib/bench-env.ts'
import { fork, spawn, type ChildProcess } from 'node:child_process'
import { readFileSync } from 'node:fs'
import http from 'node:http'
import os from 'node:os'
import { parseArgs } from 'node:util'
import { findAccountByKey, setPlan } from '../../src/platform/accounts.ts'
import { loadConfig } from '../../src/platform/config.ts'
import { createPlatform } from '../../src/platform/platform.ts'
import { ALL_INDEXES } from '../../src/collections.ts'
import { fmt } from './lib/harness.ts'
import { writeBenchSection } from './lib/report.ts'

const { values } = parseArgs({
  options: { streams: { type: 'string', default: '2000' }, rounds: { type: 'string', default: '10' }, 'no-write': { type: 'boolean', default: false } },
})
const STREAMS = Number(values.streams)
const ROUNDS = Number(values.rounds)
const SECTION = '## Flag change stream'

const stops: Array<() => Promise<void>> = []
const redisUrl: string = process.env.REDIS_URL ?? (await benchRedis().then((r) => (stops.push(() => r.child.stop()), r.url as string)))
const mongoUrl: string = process.env.MONGO_URL ?? (await benchMongo().then((m) => (stops.push(() => m.child.stop()), m.url as string)))
const storage = process.env.MONGO_URL ? 'MongoDB (MONGO_URL)' : 'embedded engine (jongodb)'
const env = { LOG_LEVEL: 'silent', MONGO_DB: `bench_fs_${Date.now()}`, QUEUE_PREFIX: `bfs${Date.now()}`, REDIS_URL: redisUrl, MONGO_URL: mongoUrl }
const config = loadConfig({ ...process.env, ...env })
const platform = await createPlatform({ config, redisUrl, mongoUrl, indexes: ALL_INDEXES })

const rssKiB = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1])
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
async function waitUp(url: string) {
  for (let i = 0; ; i++) {
    if ((await fetch(url).catch(() => null))?.status) return
    if (i > 300) throw new Error(`${url} did not start`)
    await sleep(100)
  }
}

/** A client holding `count` streams with node:http (one socket each); records when each sees event `round`. */
class Streams {
  private readonly reqs: http.ClientRequest[] = []
  /** Per stream, the time its latest refetch event arrived and how many it has seen. */
  readonly seen: Array<{ events: number; at: number }> = []
  /** Streams answered other than 200, or not at all, when opened. */
  refused = 0
  /** Events that did not arrive within 10 s of their change, over all rounds. */
  missed = 0

  async open(url: string, headers: Record<string, string>, count: number) {
    for (let i = 0; i < count; i += 100) {
      await Promise.all(
        Array.from({ length: Math.min(100, count - i) }, () => {
          const slot = { events: 0, at: 0 }
          this.seen.push(slot)
          return new Promise<void>((resolve, reject) => {
            const req = http.get(url, { headers, agent: false }, (res) => {
              // A refused stream is counted (and holds no slot), not the end of the run.
              if (res.statusCode !== 200) return (this.seen.splice(this.seen.indexOf(slot), 1), this.refused++, res.resume(), resolve())
              res.setEncoding('utf8')
              res.on('data', (chunk: string) => {
                // Events are small and written whole; a chunk holds whole frames.
                let at = chunk.indexOf('"refetchEvaluation"')
                while (at >= 0) {
                  slot.events++
                  slot.at = performance.now()
                  at = chunk.indexOf('"refetchEvaluation"', at + 1)
                }
              })
              resolve()
            })
            req.on('error', () => {
              if (this.seen.includes(slot) && !slot.events) (this.seen.splice(this.seen.indexOf(slot), 1), this.refused++)
              resolve()
            })
            this.reqs.push(req)
          })
        }),
      )
    }
  }

  /**
   * Fires one change with `fire` and returns the latency (ms) from the moment it was sent of each
   * stream that got it within 10 s; the others are counted in `missed` (and catch up by count).
   */
  async round(n: number, fire: () => Promise<void>): Promise<number[]> {
    const t0 = performance.now()
    await fire()
    const deadline = Date.now() + 10_000
    while (this.seen.some((s) => s.events < n) && Date.now() < deadline) await sleep(5)
    const late = this.seen.filter((s) => s.events < n)
    this.missed += late.length
    for (const s of late) s.events = n
    return this.seen.filter((s) => !late.includes(s)).map((s) => s.at - t0)
  }

  close() {
    for (const r of this.reqs) r.destroy()
  }
}

const pct = (xs: number[], p: number) => xs[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))] ?? NaN
const summary = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  return { p50: pct(s, 50), p99: pct(s, 99), max: s.at(-1)! }
}
const mib = (k: number) => `${(k / 1024).toFixed(0)} MiB`

async function stopChild(child: ChildProcess) {
  if (child.exitCode !== null) return
  child.kill('SIGTERM')
  await new Promise((r) => child.once('exit', r))
}

const load1 = os.loadavg()

// 1. The reference: bare node:http SSE fan-out.
const refPort = await benchPort()
const ref = fork('scripts/bench/lib/bare-sse.ts', [], { env: { ...process.env, PORT: String(refPort) }, execArgv: ['--import', 'tsx'], stdio: ['ignore', 'ignore', 'inherit', 'ipc'] })
await new Promise((r) => ref.once('message', r))
await sleep(500)
const refBefore = rssKiB(ref.pid!)
const refClients = new Streams()
await refClients.open(`http://127.0.0.1:${refPort}/`, {}, STREAMS)
await sleep(1_000)
const refOpen = rssKiB(ref.pid!)
const refLat: number[] = []
const refLoads: number[] = []
// Round 0 warms up (not counted).
for (let n = 0; n <= ROUNDS; n++) {
  if (n) refLoads.push(os.loadavg()[0]!)
  const lat = await refClients.round(n + 1, async () => void (await (await fetch(`http://127.0.0.1:${refPort}/fire`, { method: 'POST' })).text()))
  if (n) refLat.push(...lat)
  await sleep(300)
}
refClients.close()
await stopChild(ref)

// 2. The flags API process.
const port = await benchPort()
const api = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'api', '--service', 'flags'], {
  env: { ...process.env, ...env, FLAGS_PORT: String(port), HOST: '127.0.0.1' },
  stdio: ['ignore', 'ignore', 'inherit'],
})
const base = `http://127.0.0.1:${port}`
await waitUp(`${base}/healthz`)
const post = async (path: string, body: unknown, key?: string, method = 'POST') => {
  const r = await fetch(`${base}${path}`, { method, headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) }, body: JSON.stringify(body) })
  if (r.status >= 300) throw new Error(`${path}: ${r.status} ${await r.text()}`)
  return r.json() as Promise<any>
}
const signup = await post('/api/v1/signup', { email: `bench-stream-${Date.now()}@example.com` })
const account = await findAccountByKey(platform.db, 'flags', signup.api_key)
await setPlan(platform.db, account!._id, 'business')
const P = signup.project.id as string
for (let i = 0; i < 20; i++) await post(`/api/v1/projects/${P}/flags`, { key: `feature-${i}`, enabled: true, rules: [{ conditions: [{ attribute: 'user_id', operator: 'percent', value: 30 }], value: 'true' }] }, signup.api_key)
await sleep(500)
const apiBefore = rssKiB(api.pid!)
const clients = new Streams()
// Half, then all: two points show whether memory grows by the stream, as it should, and no faster.
await clients.open(`${base}/ofrep/v1/stream`, { authorization: `Bearer ${signup.sdk_key}` }, STREAMS / 2)
await sleep(1_000)
const apiHalf = rssKiB(api.pid!)
await clients.open(`${base}/ofrep/v1/stream`, { authorization: `Bearer ${signup.sdk_key}` }, STREAMS - STREAMS / 2)
await sleep(1_000)
const apiOpen = rssKiB(api.pid!)
const lat: number[] = []
const apiLoads: number[] = []
// Round 0 warms up (not counted).
for (let n = 0; n <= ROUNDS; n++) {
  if (n) apiLoads.push(os.loadavg()[0]!)
  const l = await clients.round(n + 1, async () => void (await post(`/api/v1/projects/${P}/flags/feature-0`, { default_value: `v${n}` }, signup.api_key, 'PUT')))
  if (n) lat.push(...l)
  await sleep(300)
}
const apiAfter = rssKiB(api.pid!)
clients.close()
const load2 = os.loadavg()

const ours = summary(lat)
const theirs = summary(refLat)
const perK = (open: number, before: number) => `${(((open - before) / STREAMS) * 1000 / 1024).toFixed(1)} MiB`
const lines = [
  SECTION,
  '',
  `Run ${new Date().toISOString().slice(0, 16)}Z on ${os.cpus().length} cores (${os.cpus()[0]?.model ?? 'cpu'}), load average (1/5/15 min) ${load1.map((l) => l.toFixed(2)).join(' / ')} at the start and ${load2.map((l) => l.toFixed(2)).join(' / ')} at the end ` +
    `(the machine is shared), storage: **${storage}**, Redis pub/sub. \`npm run bench:flags-stream\`: one flags API process (\`src/main.ts api --service flags\`) holds ${STREAMS.toLocaleString('en-US')} open \`GET /ofrep/v1/stream\` streams of one project (20 flags); ` +
    `a flag is changed ${ROUNDS} times through the API (PUT), each stream's \`refetchEvaluation\` event timed from the moment the PUT was sent (so the change's own write is included). ` +
    `Reference, same run, same client code: a bare node:http SSE server (scripts/bench/lib/bare-sse.ts) writing one event to the same number of streams per POST.`,
  '',
  '| measure | flags API | bare node:http reference | ratio (API / reference) | target |',
  '|---|---|---|---|---|',
  `| change → event on all ${STREAMS.toLocaleString('en-US')} streams, ${ROUNDS} rounds (${lat.length.toLocaleString('en-US')} events) | p50 **${fmt(ours.p50)} ms**, p99 **${fmt(ours.p99)} ms**, max **${fmt(ours.max)} ms** | p50 ${fmt(theirs.p50)} ms, p99 ${fmt(theirs.p99)} ms, max ${fmt(theirs.max)} ms | p50 ${(ours.p50 / theirs.p50).toFixed(1)}×, p99 ${(ours.p99 / theirs.p99).toFixed(1)}× | every stream ≤ 1 s |`,
  `| process RSS, no stream → ${STREAMS.toLocaleString('en-US')} streams | ${mib(apiBefore)} → ${mib(apiHalf)} (${(STREAMS / 2).toLocaleString('en-US')}) → ${mib(apiOpen)}, **${perK(apiOpen, apiBefore)} per 1,000 streams** (the second ${(STREAMS / 2).toLocaleString('en-US')} alone: ${((((apiOpen - apiHalf) / (STREAMS / 2)) * 1000) / 1024).toFixed(1)} MiB per 1,000); ${mib(apiAfter)} after the rounds | ${mib(refBefore)} → ${mib(refOpen)}, ${perK(refOpen, refBefore)} per 1,000 streams | ${((apiOpen - apiBefore) / Math.max(1, refOpen - refBefore)).toFixed(1)}× | bounded |`,
  '',
  `Warm-up: one change per side before the ${ROUNDS} timed ones (not counted). Load average (1 min) before each timed round: reference ${refLoads.map((l) => l.toFixed(1)).join(', ')}; API ${apiLoads.map((l) => l.toFixed(1)).join(', ')}. ` +
    `Streams refused when opened: API ${clients.refused}, reference ${refClients.refused}; events not received within 10 s: API ${clients.missed} of ${ROUNDS * (STREAMS - clients.refused)}, reference ${refClients.missed}.`,
  '',
  'Per stream the API keeps one socket, one PassThrough (cut off at 1 MiB unread), a heartbeat timer and a listener in its flag set\'s group; ' +
    'a change reloads the flag set once per replica and writes one ~100-byte frame per stream. The fan-out time includes the client reading all the sockets on the same shared cores.',
  '',
]
const report = lines.join('\n')
console.log(report)
if (!values['no-write']) writeBenchSection(report)

await stopChild(api)
await platform.close()
for (const s of stops) await s()
process.exit(0)
