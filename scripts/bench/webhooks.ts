// Webhook-capture benchmark, on the shared harness (lib/harness.ts; docs/benchmarks.md, "How the
// benchmarks measure"). The webhooks API (`src/main.ts api --service webhooks`) and a worker process
// (`src/main.ts worker`, capture-forward and outbox-sweep) run as in production, each a process of
// its own; the references are lib/reference-server.mjs in processes of their own, reading the body
// raw and keeping it with its lower-cased text as the capture route does. In interleaved rounds,
// after a warm-up round per side:
//  1. capture → forward latency: 100 captures/s to an endpoint forwarding to a local target, p50 of
//     (target received − capture sent) (target ≤ 50 ms); reference: a bare relay that answers, then
//     POSTs the body on to the same target (no queue, no storage);
//  2. capture throughput: POST /hook/<token> with a 1 KiB JSON body, autocannon in its own process,
//     50 connections; ratio against the bare reference (target ≥ 0.5 with storage on MONGO_URL).
// The latency rounds go first: the embedded engine's writes get slower as the collection grows.
// Every failed request (and every acknowledged capture that never reached the target) is counted.
// Appends its results to docs/benchmarks.md (replacing its own earlier section).
//
//   npm run bench:webhooks [-- --duration 5 --rounds 3 --no-write]
//
// Uses REDIS_URL / MONGO_URL when set, else starts the embedded Redis and MongoDB engine (ports and
// folders: BENCH_PORT_BASE, BENCH_DATA_DIR).
import { benchMongo, benchPort, benchRedis } from './lib/bench-env.ts'
import { writeBenchSection } from './lib/report.ts'
import { runBench } from './lib/run.ts'
import { spawn, type ChildProcess } from 'node:child_process'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import os from 'node:os'
import { parseArgs } from 'node:util'
import { ALL_INDEXES } from '../../src/collections.ts'
import { createAccount, setPlan } from '../../src/platform/accounts.ts'
import { loadConfig } from '../../src/platform/config.ts'
import { createPlatform } from '../../src/platform/platform.ts'
import { outboxSweepContract } from '../../src/platform/queue/outbox.ts'
import { captureForwardContract } from '../../src/webhooks/job-contracts.ts'
import {
  DEFAULT_ROUNDS,
  DEFAULT_SECONDS,
  describeFailures,
  fmt,
  httpSide,
  interleave,
  latencyRange,
  latencyRound,
  loadRange,
  medianRange,
  ratio,
  startReferenceServer,
  type Side,
  type Summary,
} from './lib/harness.ts'
import { arrivals, pacedSend, p50 } from './lib/paced-send.ts'

const { values } = parseArgs({
  options: { duration: { type: 'string', default: String(DEFAULT_SECONDS) }, rounds: { type: 'string', default: String(DEFAULT_ROUNDS) }, 'no-write': { type: 'boolean', default: false } },
})
const DURATION = Number(values.duration)
const ROUNDS = Number(values.rounds)
const RATE = 100
const WARMUP_SECONDS = 2
const SECTION = '## Webhook capture'

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise((r) => child.once('exit', r))
  child.kill('SIGTERM')
  await exited
}

async function main() {
  const stops: Array<() => Promise<unknown>> = []
  try {
    const redisUrl: string = process.env.REDIS_URL ?? (await benchRedis().then((r) => (stops.push(() => r.child.stop()), r.url as string)))
    const mongoUrl: string = process.env.MONGO_URL ?? (await benchMongo().then((m) => (stops.push(() => m.child.stop()), m.url as string)))
    const storage = process.env.MONGO_URL ? 'MongoDB (MONGO_URL)' : 'embedded engine (jongodb)'
    const stamp = Date.now()
    const env = { LOG_LEVEL: 'silent', MONGO_DB: `bench_webhooks_${stamp}`, QUEUE_PREFIX: `bw${stamp}`, REDIS_URL: redisUrl, MONGO_URL: mongoUrl, HOST: '127.0.0.1' }
    const platform = await createPlatform({ config: loadConfig({ ...process.env, ...env }), redisUrl, mongoUrl, indexes: ALL_INDEXES })
    stops.unshift(() => platform.close())

    // The API and the worker as in production, each in its own process.
    const port = await benchPort()
    const api = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'api', '--service', 'webhooks'], {
      env: { ...process.env, ...env, WEBHOOKS_PORT: String(port) },
      stdio: ['ignore', 'ignore', 'inherit'],
    })
    stops.unshift(() => stopChild(api))
    const worker = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'worker', '--queues', `${captureForwardContract.queue},${outboxSweepContract.queue}`], {
      env: { ...process.env, ...env, WORKER_PORT: String(await benchPort()) },
      stdio: ['ignore', 'ignore', 'inherit'],
    })
    stops.unshift(() => stopChild(worker))
    const base = `http://127.0.0.1:${port}`
    for (let i = 0; !(await fetch(`${base}/healthz`).catch(() => null))?.ok; i++) {
      if (i > 600 || api.exitCode !== null) throw new Error('the API process did not start')
      await sleep(100)
    }
    for (let i = 0; (await platform.queues.queue(captureForwardContract.queue).getWorkers()).length === 0; i++) {
      if (i > 600 || worker.exitCode !== null) throw new Error('the worker process did not start')
      await sleep(100)
    }

    const { account, apiKey } = await createAccount(platform.db, 'webhooks', `bench-${stamp}@example.com`)
    await setPlan(platform.db, account._id, 'business')
    const endpoint = async (body: object) => {
      const r = await fetch(`${base}/api/v1/endpoints`, { method: 'POST', headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify(body) })
      if (r.status !== 201 && r.status !== 200) throw new Error(`endpoint: ${r.status} ${await r.text()}`)
      return (await r.json()) as { url: string }
    }
    const hookUrl = (url: string) => `${base}${new URL(url).pathname}`
    const body = JSON.stringify({ event_type: 'transaction.completed', data: { id: 'txn_1', pad: 'x'.repeat(900) } })

    // The forward target: when each capture arrived, by the id it carries.
    const arrived = new Map<string, number>()
    const target = http.createServer((req, res) => {
      arrived.set(String(req.headers['x-bench-id']), performance.now())
      req.resume()
      req.on('end', () => res.end('ok'))
    })
    await new Promise<void>(async (r) => target.listen(await benchPort(), '127.0.0.1', () => r()))
    stops.unshift(() => new Promise<void>((r) => (target.closeAllConnections(), target.close(() => r()))))
    const targetUrl = `http://127.0.0.1:${(target.address() as AddressInfo).port}/in`
    const fwd = hookUrl((await endpoint({ forward_url: targetUrl })).url)
    const cap = hookUrl((await endpoint({})).url)
    // The references answer what a capture answers (the endpoint's configured response).
    const answer = await (await fetch(cap, { method: 'POST', headers: { 'content-type': 'application/json' }, body })).text()
    const ref = await startReferenceServer(answer, { body: 'raw' })
    stops.unshift(() => ref.close())
    const relay = await startReferenceServer(answer, { body: 'raw', forwardTo: targetUrl })
    stops.unshift(() => relay.close())

    let round = 0
    const forwardSide = (name: string, url: string): Side => ({
      name,
      unit: 'ms p50',
      async round(seconds) {
        const p = await pacedSend(RATE, seconds, `${name}-${++round}-`, (id) => fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', 'x-bench-id': id }, body }))
        const a = await arrivals(p, arrived)
        return latencyRound(a.latencies, a.failures)
      },
    })
    const latency = await interleave([forwardSide('relay (reference)', `${relay.url}/hook/ref`), forwardSide('capture → forward', fwd)], { rounds: ROUNDS, seconds: DURATION, warmupSeconds: WARMUP_SECONDS })
    const target0 = { method: 'POST' as const, headers: { 'content-type': 'application/json' }, body }
    const throughput = await interleave([httpSide('reference', { ...target0, url: `${ref.url}/hook/ref` }, { connections: 50 }), httpSide('capture', { ...target0, url: cap }, { connections: 50 })], {
      rounds: ROUNDS,
      seconds: DURATION,
      warmupSeconds: WARMUP_SECONDS,
    })

    const relayS = latency['relay (reference)']!
    const fwdS = latency['capture → forward']!
    const refS = throughput.reference!
    const capS = throughput.capture!
    const tr = ratio(capS, refS)
    const lr = ratio(fwdS, relayS)
    const failed = (s: Summary) => (s.failed ? `${s.failed} ${describeFailures(s.failures)}` : '0')
    const perRound = (s: Summary, d = 0) => `${s.name} ${s.rounds.map((x) => `${x.load.toFixed(1)} → ${fmt(x.rate, d)}`).join(', ')}`
    const lines = [
      SECTION,
      '',
      `Run ${new Date().toISOString().slice(0, 16)}Z on ${os.cpus().length} shared cores (${os.cpus()[0]?.model.trim() ?? 'cpu'}), Node ${process.version}, storage: **${storage}**, ` +
        `Redis ${process.env.REDIS_URL ? 'at REDIS_URL' : 'embedded'}. The webhooks API and a worker process run as in production (\`src/main.ts api --service webhooks\`, \`src/main.ts worker\`); ` +
        `shared harness: a ${WARMUP_SECONDS} s warm-up round per side, then ${ROUNDS} interleaved rounds of ${DURATION} s, median (range) of the rounds. ` +
        `Load average (1 min) before the rounds: ${loadRange(relayS, fwdS, refS, capS)}. \`npm run bench:webhooks\`.`,
      '',
      '| measure | result | target | |',
      '|---|---|---|---|',
      `| reference: bare Koa in its own process, reads the body raw and keeps it with its lower-cased text, answers what a capture answers | ${medianRange(refS)}, p99 ${refS.p99} ms | | |`,
      `| capture POST /hook/<token>, 1 KiB JSON, autocannon 50 connections in its own process | ${medianRange(capS)}, p99 ${capS.p99} ms | | |`,
      `| capture / reference (per round pair) | **${fmt(tr.median, tr.median < 0.1 ? 4 : 2)}** (${fmt(tr.min, tr.min < 0.1 ? 4 : 2)}–${fmt(tr.max, tr.max < 0.1 ? 4 : 2)}) | ≥ 0.5 with MONGO_URL | ${process.env.MONGO_URL ? (tr.median >= 0.5 ? 'met' : 'NOT met') : 'embedded engine: not the target\'s storage'} |`,
      `| capture failed requests (non-2xx, errors, timeouts) | ${failed(capS)} | 0 | ${capS.failed ? 'NOT met' : 'met'} |`,
      `| reference: bare relay in its own process, answers, then POSTs the body on to the target, ${RATE}/s | p50 ${latencyRange(relayS)}, p99 ${relayS.p99} ms | | |`,
      `| capture → forward target at ${RATE}/s (API, queue, worker) | p50 **${latencyRange(fwdS)}**, p99 ${fwdS.p99} ms | p50 ≤ 50 ms | ${fwdS.median <= 50 ? 'met' : 'NOT met'} |`,
      `| capture → forward / relay, p50 per round pair | ${lr.text} | | |`,
      `| forward failures (captures not answered 2xx, or acknowledged and never at the target within 30 s) | ${failed(fwdS)} | 0 | ${fwdS.failed ? 'NOT met' : 'met'} |`,
      '',
      `Per round (load average before it → figure): ${[refS, capS].map((s) => perRound(s)).join('; ')} req/s; ${[relayS, fwdS].map((s) => perRound(s, 1)).join('; ')} ms p50.`,
      '',
      'Captures are group-committed (src/platform/store/group-insert.ts): inserts that arrive while one is in flight go out together as one insertMany. ' +
        (process.env.MONGO_URL
          ? ''
          : 'On the embedded engine capture throughput is storage-bound and falls as the run stores more; it is the embedded engine\'s figure, not a production one. ' +
            'The throughput target is defined on a real MongoDB: `MONGO_URL=mongodb://… npm run bench:webhooks`. ') +
        'The load generator and the latency client share the two cores with the system; compare ratios within one run.',
      '',
    ]
    const report = lines.join('\n')
    console.log(`\n${report}`)
    if (!values['no-write']) writeBenchSection(report)
  } finally {
    for (const s of stops) await s().catch(() => undefined)
  }
}

runBench(main)
