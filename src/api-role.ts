// The start role (the whole system: embedded Redis and MongoDB unless given, the APIs here, worker
// processes beside) and the api role (HTTP APIs only).
import { spawn, type ChildProcess } from 'node:child_process'
import type { Server } from 'node:http'
import { fileURLToPath } from 'node:url'
import { ALL_COLLECTIONS, ALL_INDEXES } from './collections.ts'
import { SERVICES, serviceByName } from './services.ts'
import { ALL_QUEUES } from './job-contracts.ts'
import { loadConfig, type Config } from './platform/config.ts'
import { ensureInfra } from './embedded/index.ts'
import { logger } from './platform/logger.ts'
import { createPlatform, type Platform } from './platform/platform.ts'
import { startWorkers } from '../workers/main.ts'
import { readConsumers } from './platform/queue/consumers.ts'
import { appClosed, listen } from './serve.ts'
import { closeServer, onShutdown, STOP_WITH_PARENT } from './shutdown.ts'
import { requireUrls } from './role-urls.ts'

/** The CLI entry a worker process runs (`main.ts worker`). */
const CLI_ENTRY = fileURLToPath(new URL('./main.ts', import.meta.url))

function spawnWorkerProcess(env: NodeJS.ProcessEnv, index: number): ChildProcess {
  const child = spawn(process.execPath, [...process.execArgv, CLI_ENTRY, 'worker'], {
    env: { ...env, QW_ROLE: `worker-${index}`, [STOP_WITH_PARENT]: '1' },
    // The IPC channel closes when this process dies, however it dies: the worker then stops too.
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  })
  child.on('exit', (code, sig) => {
    if (code !== 0 && sig !== 'SIGTERM' && sig !== 'SIGINT') logger.error({ code, sig, index }, 'worker process exited')
  })
  return child
}

export async function cmdStart(config: Config, opts: { ephemeral?: boolean; acceptJournalDamage?: boolean } = {}): Promise<void> {
  const infra = await ensureInfra(config, { ...opts, known: ALL_COLLECTIONS })
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
      await Promise.all(servers.map((s) => closeServer(s, config).then(() => appClosed(s))))
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

export async function cmdApi(config: Config, names: string[]): Promise<void> {
  const services = names.map(serviceByName)
  const platform = await createPlatform({ config, ...requireUrls(config, 'api'), indexes: ALL_INDEXES, queues: ALL_QUEUES })
  const servers = await Promise.all(services.map((s) => listen(platform, s, s.port(config))))
  services.forEach((s, i) => logger.info({ service: s.name, port: (servers[i]!.address() as { port: number }).port }, 'api listening'))
  onShutdown(config, {
    async drain() {
      await Promise.all(servers.map((s) => closeServer(s, config).then(() => appClosed(s))))
      await platform.close()
    },
  })
}

