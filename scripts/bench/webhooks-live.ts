// Webhook live-stream benchmark (docs/webhooks-tools.md, "Live stream"), run by `npm run bench:webhooks`
// after the capture benchmark, or alone: `npm run bench:webhooks-live [-- --duration 5 --rounds 3
// --streams 1000 --no-write]`. On the shared harness (lib/harness.ts): a warm-up round per side,
// then interleaved rounds, median and range, the load average before each round, failures counted.
//  1. capture → event latency: 100 captures/s to one endpoint, one stream open on it; p50 of
//     (event received − capture sent) (target ≤ 100 ms);
//  2. 1,000 open streams on one API process: RSS before and with the streams open, and the latency
//     again at 100 captures/s spread over the streamed endpoints while all streams are open.
// The API runs as its own process (`src/main.ts api --service webhooks`, as in production), so its
// RSS is its own. The reference, in a process of its own too (lib/reference-server.mjs): a bare
// Koa app that keeps each POSTed body raw and writes it as an event to the streams open on its
// endpoint (no storage, no Redis); the same client code reads both.
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
import { runBench } from './lib/run.ts'
import { DEFAULT_ROUNDS, DEFAULT_SECONDS, describeFailures, fmt, interleave, latencyRange, latencyRound, loadRange, ratio, startReferenceServer, type Side, type Summary } from './lib/harness.ts'
import { arrivals, p50, pacedSend } from './lib/paced-send.ts'

const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: String(DEFAULT_SECONDS) },
    rounds: { type: 'string', default: String(DEFAULT_ROUNDS) },
    streams: { type: 'string', default: '1000' },
    'no-write': { type: 'boolean', default: false },
  },
})
const DURATION = Number(values.duration)
const ROUNDS = Number(values.rounds)
const STREAMS = Number(values.streams)
const RATE = 100
const ENDPOINTS = 100
const WARMUP_SECONDS = 2
const SECTION = '## Webhook live stream'
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const rssKiB = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1])

async function main() {
  const stops: Array<() => Promise<unknown>> = []
  const aborts: AbortController[] = []
  try {
    const redisUrl: string = process.env.REDIS_URL ?? (await benchRedis().then((r) => (stops.push(() => r.child.stop()), r.url as string)))
    const mongoUrl: string = process.env.MONGO_URL ?? (await benchMongo().then((m) => (stops.push(() => m.child.stop()), m.url as string)))
    const storage = process.env.MONGO_URL ? 'MongoDB (MONGO_URL)' : 'embedded engine (jongodb)'
    const env = { LOG_LEVEL: 'silent', MONGO_DB: `bench_live_${Date.now()}`, QUEUE_PREFIX: `bl${Date.now()}`, REDIS_URL: redisUrl, MONGO_URL: mongoUrl }
    const platform = await createPlatform({ config: loadConfig({ ...process.env, ...env }), redisUrl, mongoUrl, indexes: ALL_INDEXES })
    stops.unshift(() => platform.close())

    const port = await benchPort()
    const api = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'api', '--service', 'webhooks'], {
      env: { ...process.env, ...env, WEBHOOKS_PORT: String(port), HOST: '127.0.0.1' },
      stdio: ['ignore', 'ignore', 'inherit'],
    })
    stops.unshift(() => (api.exitCode !== null ? Promise.resolve() : new Promise((r) => (api.once('exit', r), api.kill('SIGTERM')))))
    const base = `http://127.0.0.1:${port}`
    for (let i = 0; !(await fetch(`${base}/healthz`).catch(() => null))?.ok; i++) {
      if (i > 600 || api.exitCode !== null) throw new Error('the API process did not start')
      await sleep(100)
    }

    const { account, apiKey: key } = await createAccount(platform.db, 'webhooks', `bench-live-${Date.now()}@example.com`)
    await setPlan(platform.db, account._id, 'business')
    const tokens: string[] = []
    for (let i = 0; i < ENDPOINTS; i++) {
      const r = await fetch(`${base}/api/v1/endpoints`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: '{}' })
      tokens.push(((await r.json()) as { endpoint_id: string }).endpoint_id)
    }
    const answer = await (await fetch(`${base}/hook/${tokens[0]}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"bench":"first"}' })).text()
    const ref = await startReferenceServer(answer, { body: 'raw' })
    stops.unshift(() => ref.close())

    // Both servers' events carry the capture's body as text: {"bench": "<id>"}.
    const received = new Map<string, number>()
    const onEvent = (ev: { event?: string; data: string }) => {
      if (ev.event !== 'capture') return
      const id = (JSON.parse((JSON.parse(ev.data) as { body: string }).body) as { bench: string }).bench
      if (!received.has(id)) received.set(id, performance.now())
    }
    let refused = 0
    const open = async (api: string, token: string) => {
      const ac = new AbortController()
      aborts.push(ac)
      const s = openStream({ api, token, key, signal: ac.signal, onEvent })
      s.ended.catch(() => undefined)
      await s.opened.catch(() => void refused++)
    }
    let round = 0
    const extra = new Map<string, { calls: number; afterAnswer: number[]; answer: number[] }>()
    const streamSide = (name: string, root: string, targets: string[]): Side => ({
      name,
      unit: 'ms p50',
      async round(seconds) {
        const p = await pacedSend(RATE, seconds, `${name}-${++round}-`, (id, i) =>
          fetch(`${root}/hook/${targets[i % targets.length]}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ bench: id }) }),
        )
        const a = await arrivals(p, received)
        const e = extra.get(name) ?? extra.set(name, { calls: 0, afterAnswer: [], answer: [] }).get(name)!
        // The first call is the warm-up round (not counted).
        if (e.calls++ > 0) {
          e.afterAnswer.push(p50(a.afterAnswer))
          e.answer.push(p50(a.answer))
        }
        return latencyRound(a.latencies, a.failures)
      },
    })
    const opts = { rounds: ROUNDS, seconds: DURATION, warmupSeconds: WARMUP_SECONDS }

    // 1. One stream on each server, 100 captures/s.
    await open(ref.url, tokens[0]!)
    await open(base, tokens[0]!)
    const one = await interleave([streamSide('reference, 1 stream', ref.url, [tokens[0]!]), streamSide('API, 1 stream', base, [tokens[0]!])], opts)
    aborts.splice(0).forEach((a) => a.abort())

    // 2. STREAMS streams on each, spread over ENDPOINTS endpoints; captures to 10 of them.
    await sleep(1_000)
    const rssBefore = { api: rssKiB(api.pid!), ref: rssKiB(ref.child.pid!) }
    for (const root of [ref.url, base]) {
      for (let i = 0; i < STREAMS; i += 50) await Promise.all(Array.from({ length: Math.min(50, STREAMS - i) }, (_, j) => open(root, tokens[(i + j) % ENDPOINTS]!)))
    }
    await sleep(2_000)
    const rssOpen = { api: rssKiB(api.pid!), ref: rssKiB(ref.child.pid!) }
    const many = await interleave([streamSide(`reference, ${STREAMS} streams`, ref.url, tokens.slice(0, 10)), streamSide(`API, ${STREAMS} streams`, base, tokens.slice(0, 10))], opts)
    const rssAfter = rssKiB(api.pid!)

    const [ref1, api1] = [one['reference, 1 stream']!, one['API, 1 stream']!]
    const [refN, apiN] = [many[`reference, ${STREAMS} streams`]!, many[`API, ${STREAMS} streams`]!]
    const mib = (k: number) => `${(k / 1024).toFixed(0)} MiB`
    const failed = (s: Summary) => (s.failed ? `${s.failed} ${describeFailures(s.failures)}` : '0')
    const med = (xs: number[] = []) => fmt(p50(xs))
    const perRound = (s: Summary) => `${s.name} ${s.rounds.map((x) => `${x.load.toFixed(1)} → ${fmt(x.rate)}`).join(', ')}`
    const lines = [
      SECTION,
      '',
      `Run ${new Date().toISOString().slice(0, 16)}Z on ${os.cpus().length} shared cores (${os.cpus()[0]?.model.trim() ?? 'cpu'}), storage: **${storage}**, Redis pub/sub. ` +
        `The API is its own process (\`src/main.ts api --service webhooks\`); the reference is a bare Koa app in its own process that writes each POSTed body as an event to the streams open on its endpoint (no storage, no Redis). ` +
        `Both are read by the benchmark process with the same client (fetch, scripts/listen/stream.ts). Shared harness: a ${WARMUP_SECONDS} s warm-up round per side, then ${ROUNDS} interleaved rounds of ${DURATION} s at ${RATE} captures/s, ` +
        `median (range) of the rounds' p50. Load average (1 min) before the rounds: ${loadRange(ref1, api1, refN, apiN)}. \`npm run bench:webhooks-live\` (also run by \`npm run bench:webhooks\`).`,
      '',
      '| measure | API | reference | API / reference (per round pair) | target |',
      '|---|---|---|---|---|',
      `| capture → event on a connected stream, 1 stream | p50 **${latencyRange(api1)}**, p99 ${api1.p99} ms; the capture's own answer p50 ${med(extra.get(api1.name)?.answer)} ms, event − answer p50 ${med(extra.get(api1.name)?.afterAnswer)} ms | p50 ${latencyRange(ref1)}, p99 ${ref1.p99} ms | ${ratio(api1, ref1).text} | p50 ≤ 100 ms: ${api1.median <= 100 ? 'met' : 'NOT met'} |`,
      `| process RSS, no stream → ${STREAMS} open streams (${ENDPOINTS} endpoints) | ${mib(rssBefore.api)} → **${mib(rssOpen.api)}** (${((rssOpen.api - rssBefore.api) / STREAMS).toFixed(1)} KiB per stream) | ${mib(rssBefore.ref)} → ${mib(rssOpen.ref)} (${((rssOpen.ref - rssBefore.ref) / STREAMS).toFixed(1)} KiB per stream) | | bounded |`,
      `| capture → event with ${STREAMS} streams open, captures over 10 endpoints (each event to ${STREAMS / ENDPOINTS} streams) | p50 **${latencyRange(apiN)}**, p99 ${apiN.p99} ms; the capture's own answer p50 ${med(extra.get(apiN.name)?.answer)} ms, event − answer p50 ${med(extra.get(apiN.name)?.afterAnswer)} ms | p50 ${latencyRange(refN)}, p99 ${refN.p99} ms | ${ratio(apiN, refN).text} | p50 ≤ 100 ms: ${apiN.median <= 100 ? 'met' : 'NOT met'} |`,
      `| API process RSS after that load | ${mib(rssAfter)} | | | bounded |`,
      `| failed (captures not answered 2xx, or events not received within 30 s) | 1 stream: ${failed(api1)}; ${STREAMS} streams: ${failed(apiN)} | ${failed(ref1)}; ${failed(refN)} | | 0 |`,
      '',
      `Per round (load average before it → ms p50): ${[ref1, api1, refN, apiN].map(perRound).join('; ')}.` + (refused ? ` Streams refused when opened: ${refused}.` : ''),
      '',
      'Memory per stream is bounded by design: one Redis subscriber per API process (channels are shared), a per-stream buffer cut off at 4 MiB (a slow client is ' +
        'disconnected and resumes from MongoDB with Last-Event-ID), and bodies over 64 KiB left out of events. ' +
        '"event − answer" is the time the stream adds after the capture was stored and answered (the median of the rounds\' p50s).',
      '',
    ]
    const report = lines.join('\n')
    console.log(`\n${report}`)
    if (!values['no-write']) writeBenchSection(report)
  } finally {
    aborts.forEach((a) => a.abort())
    for (const s of stops) await s().catch(() => undefined)
  }
}

runBench(main)
