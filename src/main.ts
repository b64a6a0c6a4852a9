// CLI entry. One build serves every role:
//   start                                   everything on embedded defaults (or REDIS_URL/MONGO_URL)
//   api --service invoice[,flags,webhooks]  HTTP APIs only
//   worker [--queues a,b] [--concurrency N] job processors only
import { spawn, type ChildProcess } from 'node:child_process'
import type { Server } from 'node:http'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { ALL_COLLECTIONS, ALL_INDEXES, SERVICES, serviceByName } from './services.ts'
import { ALL_QUEUES } from './job-contracts.ts'
import type { ServiceDef } from './platform/service.ts'
import { loadConfig, type Config } from './platform/config.ts'
import { ensureInfra } from './platform/embedded/index.ts'
import { logger } from './platform/logger.ts'
import { createPlatform, type Platform } from './platform/platform.ts'
import { startWorkers } from '../workers/main.ts'
import { JOBS } from '../jobs/index.ts'
import { closeGracefully, startDraining, trackConnections } from './platform/ops/lifecycle.ts'
import { mountOps } from './platform/ops/routes.ts'
import { answerClientErrorsAsJson } from './platform/http/client-error.ts'
import { startWorkerHttp } from './platform/ops/worker-http.ts'
import { startTracing, stopTracing } from './platform/tracing.ts'
import { readConsumers } from './platform/consumers.ts'

type Stopper = () => Promise<void>

export async function listen(platform: Platform, svc: ServiceDef, port: number): Promise<Server> {
  for (const q of svc.awaits) {
    await platform.queues.listen(q)
    platform.consumers.watch(q)
  }
  const { app, close } = svc.createApp(platform)
  mountOps(app, platform, { service: svc.name, jobs: JOBS, api: { basePath: svc.basePath }, awaits: svc.awaits })
  const server = app.listen(port, platform.config.HOST)
  trackConnections(server)
  answerClientErrorsAsJson(server)
  // What the app holds (caches, subscribers) lives as long as the server that serves it.
  server.once('close', () => void close())
  await new Promise<void>((res, rej) => server.once('listening', res).once('error', rej))
  // Keep-alive longer than typical load balancers' idle timeout.
  server.keepAliveTimeout = 65_000
  return server
}

/** Stop accepting, let in-flight requests finish within the shutdown grace period. */
function closeServer(server: Server, config: Config): Promise<void> {
  return closeGracefully(server, config.SHUTDOWN_TIMEOUT_MS)
}

/**
 * A stop in two parts. `drain` (requests, workers) is bounded: after SHUTDOWN_TIMEOUT_MS (+2 s for
 * the cuts drain makes itself) `cut` ends what is still draining and the stop goes on. `finish`
 * (start's final snapshot and journal flush) is never cut: it keeps what was acknowledged, and a
 * deadline that ends it would lose that (docs/operations.md, "Stopping"). A second signal while
 * `finish` runs exits at once: the store's journal still holds every acknowledged write.
 */
function onShutdown(config: Config, stop: { drain: Stopper; cut?: () => void; finish?: Stopper; abandon?: () => void }): void {
  let stopping = false
  let finishing = false
  const handler = (sig: string) => {
    if (stopping) {
      if (!finishing) return
      logger.warn({ sig }, 'second signal during the final snapshot: exiting now (the journal keeps what was acknowledged)')
      stop.abandon?.()
      process.exit(1)
    }
    stopping = true
    const began = performance.now()
    logger.info({ sig }, 'shutting down')
    let timer: NodeJS.Timeout | undefined
    const deadline = new Promise<'cut'>((res) => (timer = setTimeout(() => res('cut'), config.SHUTDOWN_TIMEOUT_MS + 2_000)))
    // A drain that fails still leads to `finish`: what was acknowledged is kept either way.
    const drained = stop.drain().then(
      () => 'drained' as const,
      (err) => (logger.error({ err: String(err) }, 'draining failed'), 'drained' as const),
    )
    Promise.race([drained, deadline])
      .then((how) => {
        clearTimeout(timer)
        if (how === 'cut' && !stop.cut) {
          // Nothing here to cut or keep (api, worker): the stop ends as it always did.
          logger.error('shutdown took too long; exiting')
          process.exit(1)
        }
        if (how === 'cut') {
          logger.warn({ ms: Math.round(performance.now() - began) }, 'draining took too long; cutting what is left')
          stop.cut?.()
        }
        finishing = true
        return stop.finish?.()
      })
      // Spans still buffered for the collector go out before the process ends.
      .then(stopTracing)
      .then(
        () => {
          logger.info({ ms: Math.round(performance.now() - began) }, 'stopped')
          process.exit(0)
        },
        (err) => {
          logger.error({ err: String(err) }, 'shutdown failed')
          process.exit(1)
        },
      )
  }
  process.on('SIGINT', () => handler('SIGINT'))
  process.on('SIGTERM', () => handler('SIGTERM'))
}

/** Set by `start` on the worker processes it spawns, with an IPC channel to them. */
const STOP_WITH_PARENT = 'QW_STOP_WITH_PARENT'

function spawnWorkerProcess(env: NodeJS.ProcessEnv, index: number): ChildProcess {
  const entry = fileURLToPath(import.meta.url)
  const child = spawn(process.execPath, [...process.execArgv, entry, 'worker'], {
    env: { ...env, QW_ROLE: `worker-${index}`, [STOP_WITH_PARENT]: '1' },
    // The IPC channel closes when this process dies, however it dies: the worker then stops too.
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  })
  child.on('exit', (code, sig) => {
    if (code !== 0 && sig !== 'SIGTERM' && sig !== 'SIGINT') logger.error({ code, sig, index }, 'worker process exited')
  })
  return child
}

async function cmdStart(config: Config, ephemeral = false): Promise<void> {
  const infra = await ensureInfra(config, { ephemeral, known: ALL_COLLECTIONS })
  // What was started (the Stripe simulator) is configuration like the rest; workers inherit it.
  config = loadConfig({ ...process.env, ...infra.env })
  // The whole system runs here, so queue depth is exported here once by default; never by workers.
  config = { ...config, QUEUE_METRICS: config.QUEUE_METRICS ?? true }
  // Worker processes first: loading their modules and warming their render threads is most of a
  // start, and it overlaps with this process opening the stores and the APIs (docs/benchmarks.md).
  const env = { ...process.env, ...infra.env, REDIS_URL: infra.redisUrl, MONGO_URL: infra.mongoUrl, QUEUE_METRICS: 'false' }
  const children = Array.from({ length: config.WORKER_PROCESSES }, (_, i) => spawnWorkerProcess(env, i))
  const platform = await createPlatform({ config, redisUrl: infra.redisUrl, mongoUrl: infra.mongoUrl, indexes: ALL_INDEXES, queues: ALL_QUEUES })
  const servers: Server[] = []
  for (const svc of SERVICES) servers.push(await listen(platform, svc, svc.port(config)))
  // With no worker processes asked for, run the workers here (render still uses its own threads).
  const inline = config.WORKER_PROCESSES === 0 ? await startWorkers(platform) : null

  console.log('\nqueueworks is starting:')
  for (const svc of SERVICES) console.log(`  ${svc.name.padEnd(9)} http://localhost:${svc.port(config)}${svc.basePath}`)
  console.log(`  workers   ${config.WORKER_PROCESSES || 'in-process'} process(es)`)
  console.log(`  redis     ${infra.redisUrl}${infra.embedded.redis ? ' (embedded)' : ''}`)
  console.log(`  mongo     ${infra.mongoUrl}${infra.embedded.mongo ? ' (embedded engine)' : ' (MONGO_URL)'}`)
  if (infra.embedded.mongo) {
    console.log(
      infra.dataDir
        ? `  data      ${infra.dataDir} (kept: snapshot every ${Math.round(config.SNAPSHOT_INTERVAL_MS / 1000)} s and at stop)`
        : '  data      not kept (ephemeral: everything is gone when this stops)',
    )
  }
  if (infra.stripe) {
    // Printed so that the official stripe client (or curl) can be pointed at it: see docs/billing.md.
    console.log(`  stripe    ${infra.stripe} (simulator: no real payments)`)
    console.log(`            secret key ${infra.env.STRIPE_SECRET_KEY}`)
  }
  console.log('Press Ctrl-C to stop.')
  console.log('Workers starting: until "queueworks is ready" below, a request that needs one gets 503 with Retry-After.\n')
  void announceReady(platform, SERVICES.flatMap((s) => s.awaits))

  onShutdown(config, {
    async drain() {
      await Promise.all(servers.map((s) => closeServer(s, config)))
      await Promise.all(
        // A worker may be gone already: the same SIGTERM reached it (a signal to the process group).
        children.map((c) => new Promise<void>((res) => (c.exitCode !== null || c.signalCode !== null ? res() : (c.once('exit', () => res()), c.kill('SIGTERM'))))),
      )
      await inline?.close()
      await platform.close()
    },
    // A worker still draining after the deadline is ended: its unfinished jobs stay in Redis (kept
    // in the data folder) and are taken over at the next start; what it had acknowledged is stored.
    cut() {
      for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL')
      for (const s of servers) s.closeAllConnections()
    },
    finish: () => infra.stop(),
    abandon: () => infra.abandon(),
  })
}

/**
 * Print the line that says the system serves end to end: once a live worker consumes every queue a
 * request waits on (consumers.ts), which is when such requests stop being refused.
 */
async function announceReady(platform: Platform, awaited: string[]): Promise<void> {
  for (;;) {
    const idle = await Promise.all(awaited.map(async (q) => (await readConsumers(platform, q).catch(() => ({ workers: 0 }))).workers === 0))
    if (!idle.some(Boolean)) break
    await new Promise((r) => setTimeout(r, 200).unref())
  }
  console.log(`queueworks is ready: invoices are served end to end (${process.uptime().toFixed(1)} s after start).\n`)
}

function requireUrls(config: Config, role: string): { redisUrl: string; mongoUrl: string } {
  if (!config.REDIS_URL || !config.MONGO_URL) {
    throw new Error(`the ${role} role needs REDIS_URL and MONGO_URL (use "start" for embedded defaults)`)
  }
  return { redisUrl: config.REDIS_URL, mongoUrl: config.MONGO_URL }
}

async function cmdApi(config: Config, names: string[]): Promise<void> {
  const services = names.map(serviceByName)
  const platform = await createPlatform({ config, ...requireUrls(config, 'api'), indexes: ALL_INDEXES, queues: ALL_QUEUES })
  const servers = await Promise.all(services.map((s) => listen(platform, s, s.port(config))))
  services.forEach((s, i) => logger.info({ service: s.name, port: (servers[i]!.address() as { port: number }).port }, 'api listening'))
  onShutdown(config, {
    async drain() {
      await Promise.all(servers.map((s) => closeServer(s, config)))
      await platform.close()
    },
  })
}

/** A worker process that `start` spawned drains and exits when `start` is gone (even SIGKILLed). */
function stopWithParent(): void {
  if (process.env[STOP_WITH_PARENT] !== '1') return
  // Before the shutdown handler is in place, SIGTERM simply ends the process: nothing to drain yet.
  const stop = (): void => void process.kill(process.pid, 'SIGTERM')
  // The channel is gone already when the parent died while this process was loading its modules.
  if (!process.channel || !process.connected) return stop()
  process.channel.unref()
  process.once('disconnect', stop)
}

async function cmdWorker(config: Config, queues: string[], concurrency?: number): Promise<void> {
  stopWithParent()
  const platform = await createPlatform({ config, ...requireUrls(config, 'worker'), indexes: ALL_INDEXES, queues: ALL_QUEUES })
  const running = await startWorkers(platform, { queues, concurrency })
  const http = config.WORKER_PORT !== undefined ? await startWorkerHttp(platform, JOBS, config.WORKER_PORT) : null
  onShutdown(config, {
    async drain() {
      // Probes keep answering (readyz: 503) while jobs drain.
      startDraining()
      await running.close()
      if (http) await closeServer(http, config)
      await platform.close()
    },
  })
}

export const USAGE = 'usage: main.ts start [--ephemeral] | api [--service invoice,flags,webhooks] | worker [--queues q1,q2] [--concurrency N]'

export type Command =
  | { cmd: 'start'; ephemeral: boolean }
  | { cmd: 'api'; services: string[] }
  | { cmd: 'worker'; queues: string[]; concurrency?: number }

/** CLI arguments to a command (exported so that docker-compose.yml is checked against the CLI). */
export function parseCommand(argv: string[]): Command | null {
  const [cmd, ...rest] = argv
  const { values } = parseArgs({
    args: rest,
    options: { service: { type: 'string' }, queues: { type: 'string' }, concurrency: { type: 'string' }, ephemeral: { type: 'boolean' } },
    allowPositionals: false,
  })
  const list = (s?: string) => (s ? s.split(',').map((x) => x.trim()).filter(Boolean) : [])
  switch (cmd) {
    case 'start':
      return { cmd, ephemeral: values.ephemeral === true }
    case 'api':
      return { cmd, services: values.service ? list(values.service) : SERVICES.map((s) => s.name) }
    case 'worker': {
      // An empty value is a mistake too, not "use the default".
      const n = values.concurrency !== undefined ? Number(values.concurrency) : undefined
      if (n !== undefined && !(Number.isInteger(n) && n > 0 && n <= 256)) throw new Error('--concurrency must be an integer from 1 to 256')
      return { cmd, queues: list(values.queues), concurrency: n }
    }
    default:
      return null
  }
}

async function main(argv: string[]): Promise<void> {
  const command = parseCommand(argv)
  if (!command) {
    console.error(USAGE)
    process.exit(2)
  }
  const config = loadConfig()
  // Before anything builds queues, workers or apps: they pick their tracing up when created.
  const role = command.cmd === 'api' ? command.services.join('-') : command.cmd
  await startTracing({ endpoint: config.OTEL_EXPORTER_OTLP_ENDPOINT, serviceName: `queueworks-${role}` })
  switch (command.cmd) {
    case 'start':
      return cmdStart(config, command.ephemeral)
    case 'api':
      return cmdApi(config, command.services)
    case 'worker':
      return cmdWorker(config, command.queues, command.concurrency)
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main(process.argv.slice(2)).catch((err) => {
    console.error(`error: ${err instanceof Error ? err.message : String(err)}`)
    process.exit(1)
  })
}
