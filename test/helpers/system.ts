// A running system for one test file: the chosen services on free ports, workers in-process (or
// as separate processes via spawnWorker), a fresh MongoDB database and queue prefix, all real.
import { spawn, type ChildProcess } from 'node:child_process'
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { randomBytes } from 'node:crypto'
import { appClosed, listen } from '../../src/serve.ts'
import { ALL_INDEXES } from '../../src/collections.ts'
import { SERVICES } from '../../src/services.ts'
import { ALL_QUEUES } from '../../src/job-contracts.ts'
import type { Service } from '../../src/platform/plans.ts'
import { loadConfig, type Config } from '../../src/platform/config.ts'
import { createPlatform, type Platform } from '../../src/platform/platform.ts'
import { startWorkers, type RunningWorkers, type WorkerOptions } from '../../workers/main.ts'
import { startStripeSimulator, type StripeSimulator } from '../../src/embedded/stripe-simulator/server.ts'
import { clock } from '../../src/platform/clock.ts'


export interface TestSystem {
  platform: Platform
  config: Config
  /** Base URL of each started service, including its documented base path (invoice: …/api/v1). */
  url: Record<string, string>
  /** Host root of each started service (http://127.0.0.1:PORT). */
  root: Record<string, string>
  workers: RunningWorkers | null
  env: Record<string, string>
  /** The Stripe simulator the services talk to (null when opts.env brings STRIPE_SECRET_KEY). */
  stripe: StripeSimulator | null
  stop(): Promise<void>
}

export function testEnv(extra: Record<string, string> = {}): Record<string, string> {
  const id = randomBytes(5).toString('hex')
  return {
    NODE_ENV: 'test',
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent',
    REDIS_URL: process.env.TEST_REDIS_URL!,
    MONGO_URL: process.env.TEST_MONGO_URL!,
    MONGO_DB: `t_${id}`,
    QUEUE_PREFIX: `t_${id}`,
    JOB_LOCK_MS: '3000',
    RENDER_TIMEOUT_MS: '20000',
    // 16 slots per partitioned collection instead of the engine's default (up to 1,000): every
    // cross-slot path still runs, and a file's fresh database costs ~1.5 s less to set up (its
    // indexes are made on every slot). The default layout is what the tests that spawn `start`
    // run on; test/platform-partitioned*.test.ts choose their own counts. docs/testing.md.
    STORE_PARTITIONS: '16',
    ...extra,
  }
}

export async function startSystem(
  opts: { services?: Service[]; workers?: boolean | WorkerOptions; env?: Record<string, string> } = {},
): Promise<TestSystem> {
  // One Stripe simulator per system, on the test clock so signatures agree with the app's time.
  const stripe = opts.env?.STRIPE_SECRET_KEY ? null : await startStripeSimulator({ now: () => Math.floor(clock.nowMs() / 1000) })
  const stripeEnv: Record<string, string> = stripe ? { STRIPE_API_BASE: stripe.url, STRIPE_SECRET_KEY: stripe.secretKey, STRIPE_WEBHOOK_SECRET: stripe.webhookSecret } : {}
  const env = testEnv({ ...stripeEnv, ...opts.env })
  const config = loadConfig({ ...process.env, ...env })
  const platform = await createPlatform({ config, redisUrl: env.REDIS_URL!, mongoUrl: env.MONGO_URL!, indexes: ALL_INDEXES, queues: ALL_QUEUES })
  const servers: Server[] = []
  const url: Record<string, string> = {}
  const root: Record<string, string> = {}
  for (const svc of SERVICES.filter((s) => !opts.services || opts.services.includes(s.name))) {
    const server = await listen(platform, svc, 0)
    servers.push(server)
    root[svc.name] = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    url[svc.name] = root[svc.name] + svc.basePath
  }
  if (stripe) stripe.webhookUrls = Object.values(root).map((r) => `${r}/api/v1/billing/stripe-webhook`)
  const workers = opts.workers === false ? null : await startWorkers(platform, opts.workers === true || !opts.workers ? {} : opts.workers)
  return {
    platform,
    config,
    url,
    root,
    workers,
    env,
    stripe,
    async stop() {
      await Promise.all(servers.map((s) => new Promise<void>((r) => { s.close(() => r()); s.closeAllConnections() })))
      await Promise.all(servers.map(appClosed))
      await workers?.close(2_000)
      await platform.close()
      await stripe?.close()
    },
  }
}

/** A worker as its own OS process (`src/main.ts worker`), for kill and scaling tests. */
export function spawnWorker(env: Record<string, string>, args: string[] = []): ChildProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'worker', ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  child.stdout!.resume()
  child.stderr!.on('data', (b) => process.env.DEBUG_WORKERS && process.stderr.write(b))
  return child
}

export function waitForExit(child: ChildProcess): Promise<number | null> {
  return new Promise((r) => (child.exitCode !== null ? r(child.exitCode) : child.once('exit', (c) => r(c))))
}

/**
 * Wait until the given queues have no job waiting or running: the scheduled jobs a worker runs
 * as it starts (retention sweeps visit every slot of a partitioned collection and take a moment)
 * use the real time, so a test that then moves the clock into the past waits for them first.
 */
export async function queuesIdle(sys: TestSystem, names: string[], timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    let busy = 0
    for (const n of names) {
      const c = await sys.platform.queues.queue(n).getJobCounts('active', 'wait', 'prioritized')
      busy += (c.active ?? 0) + (c.wait ?? 0) + (c.prioritized ?? 0)
    }
    if (busy === 0) return
    if (Date.now() > deadline) throw new Error(`queues still busy after ${timeoutMs} ms: ${names.join(', ')}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}
