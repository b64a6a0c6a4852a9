// Capture forwarding with the CPU saturated: does every acknowledged capture arrive, how often
// more than once, how late, and why BullMQ's lock renewal falls behind (docs/operations.md,
// "Forwarding under overload"). In one run, on this machine:
//  1. the embedded Redis and MongoDB engine, the webhooks API in this process, one worker process
//     serving capture-forward (default concurrency 20) with bench/lib/lock-probe.ts preloaded;
//  2. a CPU hog (`stress-ng --cpu N`) started and stopped by this script;
//  3. N captures at R/s to an endpoint forwarding to a target on 127.0.0.1 that answers after a
//     delay; the target counts arrivals per capture (by the capture's own header and by
//     Queueworks-Delivery-Id), a QueueEvents listener counts the jobs BullMQ declared stalled;
//  4. the hog stops when every capture arrived (or after --bound s); then waits for stragglers.
// Prints the figures; the worker's probe says what the renewal waited on. Nothing is written.
//
//   npm run bench:forward-overload [-- --captures 300 --rate 20 --hog 24 --target-ms 300 --bound 120]
//
// Extra worker environment (e.g. JOB_LOCK_MS=4000) passes through from this process's.
import { benchMongo, benchPort, benchRedis } from './lib/bench-env.ts'
import { spawn, type ChildProcess } from 'node:child_process'
import { readFileSync, existsSync } from 'node:fs'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import os from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { QueueEvents } from 'bullmq'
import { Redis } from 'ioredis'
import { listen } from '../../src/serve.ts'
import { ALL_INDEXES } from '../../src/collections.ts'
import { ALL_QUEUES } from '../../src/job-contracts.ts'
import { webhooksService } from '../../src/webhooks/service.ts'
import { createAccount, setPlan } from '../../src/platform/accounts.ts'
import { loadConfig } from '../../src/platform/config.ts'
import { createPlatform } from '../../src/platform/platform.ts'
import { captureForwardContract } from '../../src/webhooks/job-contracts.ts'
import { attemptCollection } from '../../src/webhooks/store/capture-store.ts'
import { runBench } from './lib/run.ts'

const { values } = parseArgs({
  options: {
    captures: { type: 'string', default: '300' },
    rate: { type: 'string', default: '20' },
    hog: { type: 'string', default: '24' },
    'target-ms': { type: 'string', default: '300' },
    bound: { type: 'string', default: '120' },
  },
})
const N = Number(values.captures)
const RATE = Number(values.rate)
const HOG = Number(values.hog)
const TARGET_MS = Number(values['target-ms'])
const BOUND_MS = Number(values.bound) * 1000
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const q = (xs: number[], p: number) => (xs.length ? [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))]! : 0)

runBench(async () => {
  const stops: Array<() => Promise<unknown> | void> = []
  try {
    const redis = await benchRedis()
    stops.push(() => redis.child.stop())
    const mongo = await benchMongo()
    stops.push(() => mongo.child.stop())
    const stamp = Date.now()
    const env = { LOG_LEVEL: 'silent', MONGO_DB: `bench_fwd_${stamp}`, QUEUE_PREFIX: `bf${stamp}`, REDIS_URL: redis.url, MONGO_URL: mongo.url }
    const config = loadConfig({ ...process.env, ...env })
    const platform = await createPlatform({ config, redisUrl: redis.url, mongoUrl: mongo.url, indexes: ALL_INDEXES, queues: ALL_QUEUES })
    stops.unshift(() => platform.close())
    const server = await listen(platform, webhooksService, await benchPort())
    stops.unshift(() => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()) }))
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`

    // The target: answers after TARGET_MS; arrivals per capture.
    const arrivals = new Map<string, number[]>()
    const deliveryIds = new Map<string, Set<string>>()
    const target = http.createServer((req, res) => {
      const id = String(req.headers['x-bench-id'])
      ;(arrivals.get(id) ?? arrivals.set(id, []).get(id)!).push(Date.now())
      ;(deliveryIds.get(id) ?? deliveryIds.set(id, new Set()).get(id)!).add(String(req.headers['queueworks-delivery-id']))
      req.resume()
      req.on('end', () => setTimeout(() => res.end('ok'), TARGET_MS))
    })
    target.listen(await benchPort(), '127.0.0.1')
    await new Promise((r) => target.once('listening', r))
    stops.unshift(() => new Promise<void>((r) => { target.closeAllConnections(); target.close(() => r()) }))

    // Stalled jobs, as BullMQ reports them (whichever worker's check found them).
    const eventsConn = new Redis(redis.url, { maxRetriesPerRequest: null })
    const events = new QueueEvents(captureForwardContract.queue, { connection: eventsConn, prefix: platform.queues.prefixOf(captureForwardContract.queue) })
    let stalled = 0
    events.on('stalled', () => stalled++)
    await events.waitUntilReady()
    stops.unshift(async () => { await events.close(); eventsConn.disconnect() })

    // The worker process, with the probe.
    const probeOut = join(os.tmpdir(), `lock-probe-${stamp}.json`)
    const workerPort = await benchPort()
    const worker: ChildProcess = spawn(
      process.execPath,
      ['--import', 'tsx', '--import', './scripts/bench/lib/lock-probe.ts', 'src/main.ts', 'worker', '--queues', `${captureForwardContract.queue},outbox-sweep`],
      { env: { ...process.env, ...env, WORKER_PORT: String(workerPort), LOCK_PROBE_OUT: probeOut }, stdio: ['ignore', 'ignore', 'inherit'] },
    )
    stops.unshift(async () => {
      if (worker.exitCode === null) {
        worker.kill('SIGTERM')
        await new Promise((r) => worker.once('exit', r))
      }
    })
    const ready = Date.now() + 60_000
    while ((await platform.queues.queue(captureForwardContract.queue).getWorkers()).length === 0) {
      if (Date.now() > ready) throw new Error('worker did not start within 60 s')
      await sleep(200)
    }

    const { account, apiKey } = await createAccount(platform.db, 'webhooks', `bench-${stamp}@example.com`)
    await setPlan(platform.db, account._id, 'business')
    const ep = (await (await fetch(`${base}/api/v1/endpoints`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ forward_url: target.address() && `http://127.0.0.1:${(target.address() as AddressInfo).port}/in` }),
    })).json()) as { url: string }

    const loads: number[] = []
    const loadTimer = setInterval(() => loads.push(os.loadavg()[0]!), 1000)
    stops.unshift(() => clearInterval(loadTimer))
    const hog = spawn('stress-ng', ['--cpu', String(HOG), '--timeout', `${Math.ceil(BOUND_MS / 1000) + 60}s`, '--quiet'], { stdio: 'ignore' })
    const stopHog = async () => {
      if (hog.exitCode !== null || hog.signalCode !== null) return
      hog.kill('SIGTERM')
      await new Promise((r) => hog.once('exit', r))
    }
    stops.unshift(stopHog)
    console.log(`hog: stress-ng --cpu ${HOG}; ${N} captures at ${RATE}/s, target answers after ${TARGET_MS} ms, JOB_LOCK_MS=${config.JOB_LOCK_MS}`)
    await sleep(3000)

    const acked = new Map<string, number>()
    // Captures not acknowledged (by status; "errors": no answer): counted, not fatal.
    const refused: Record<string, number> = {}
    const started = Date.now()
    const sends: Promise<void>[] = []
    for (let i = 0; i < N; i++) {
      const id = `c${i}`
      sends.push(
        fetch(ep.url, { method: 'POST', headers: { 'x-bench-id': id, 'content-type': 'application/json' }, body: JSON.stringify({ i }) })
          .then(
            async (r) => {
              await r.arrayBuffer()
              if (r.status === 200) acked.set(id, Date.now())
              else refused[String(r.status)] = (refused[String(r.status)] ?? 0) + 1
            },
            () => void (refused.errors = (refused.errors ?? 0) + 1),
          ),
      )
      await sleep(Math.max(0, started + ((i + 1) * 1000) / RATE - Date.now()))
    }
    await Promise.all(sends)
    const allArrived = () => [...acked.keys()].every((id) => arrivals.has(id))
    while (!allArrived() && Date.now() - started < BOUND_MS) await sleep(250)
    const underHog = [...acked.keys()].filter((id) => arrivals.has(id)).length
    await stopHog()
    const quietDeadline = Date.now() + 60_000
    while (!allArrived() && Date.now() < quietDeadline) await sleep(250)
    // Let re-runs of stalled jobs finish before counting duplicates.
    const forward = platform.queues.queue(captureForwardContract.queue)
    const idleDeadline = Date.now() + 60_000
    for (;;) {
      const c = await forward.getJobCounts('active', 'wait', 'prioritized')
      if (c.active + c.wait + c.prioritized === 0 || Date.now() > idleDeadline) break
      await sleep(250)
    }
    await sleep(2000)

    const lost = [...acked.keys()].filter((id) => !arrivals.has(id))
    const counts = [...acked.keys()].map((id) => arrivals.get(id)?.length ?? 0)
    const dup = counts.filter((c) => c > 1).length
    const late = [...acked].filter(([id]) => arrivals.has(id)).map(([id, at]) => arrivals.get(id)![0]! - at)
    const idsPerCapture = Math.max(...[...deliveryIds.values()].map((s) => s.size))
    // Which kind of duplicate: the same attempt sent twice (a re-run after a lost lock), or a
    // later attempt after one recorded as failed although the target had answered (a timeout
    // that fired before the process read the answer).
    const token = ep.url.split('/hook/')[1]!.split('/')[0]!
    const recorded = new Map<string, { n: number; errors: string[] }>()
    for (let id = 1; id <= N; id++) {
      const at = await attemptCollection(platform.db, token, id).find({ endpoint_id: token, request_id: id }).toArray()
      recorded.set(String(id), { n: at.length, errors: at.filter((a) => !a.ok).map((a) => String(a.error)) })
    }
    const retried = [...recorded.values()].filter((r) => r.n > 1)
    const probe = existsSync(probeOut) ? JSON.parse(readFileSync(probeOut, 'utf8')) : null
    console.log(`load average (1 min) during the run: ${Math.min(...loads).toFixed(1)}–${Math.max(...loads).toFixed(1)}`)
    console.log(`captures acknowledged: ${acked.size} of ${N} (not acknowledged: ${JSON.stringify(refused)}); arrived under the hog: ${underHog}; never arrived: ${lost.length}`)
    console.log(`forwarded more than once: ${dup} captures, ${counts.reduce((a, c) => a + Math.max(0, c - 1), 0)} extra deliveries; delivery ids per capture: ${idsPerCapture}`)
    console.log(`first arrival after the capture's 200: p50 ${(q(late, 0.5) / 1000).toFixed(1)} s, p99 ${(q(late, 0.99) / 1000).toFixed(1)} s, max ${(q(late, 1) / 1000).toFixed(1)} s`)
    console.log(`jobs declared stalled by BullMQ: ${stalled}`)
    console.log(`captures with more than one attempt recorded: ${retried.length} (${[...new Set(retried.flatMap((r) => r.errors))].join('; ') || 'none'}); attempts recorded ${[...recorded.values()].reduce((a, r) => a + r.n, 0)}, arrivals ${counts.reduce((a, c) => a + c, 0)}`)
    console.log(`worker probe: ${JSON.stringify(probe)}`)
  } finally {
    for (const s of stops) await Promise.resolve(s()).catch(() => {})
  }
})
