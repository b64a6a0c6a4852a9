// Starts what the environment does not provide: Redis and MongoDB when their URLs are unset.
import type { Config } from '../platform/config.ts'
import { logger } from '../platform/logger.ts'
import { startMongoEngine } from './mongo-engine.ts'
import { startRedisServer } from './redis-server.ts'
import type { StartedChild } from './child.ts'
import { startStripeSimulator } from './stripe-simulator/server.ts'
import { WEBHOOK_PATH } from '../platform/billing/stripe-webhook.ts'
import { mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { openDataFolder, releaseLock, type OpenedFolder } from './data-folder.ts'
import { keepStore, type KeptStore } from './kept-store.ts'
import type { KnownCollections } from './snapshot.ts'

export interface Infra {
  redisUrl: string
  mongoUrl: string
  embedded: { redis: boolean; mongo: boolean }
  /** Where the embedded engine's data is kept; null when it is not kept (ephemeral) or not embedded. */
  dataDir: string | null
  /** Address of the embedded Stripe simulator, when one was started. */
  stripe?: string
  /** An exit that cannot wait for stop(): flush what is kept (the journal) to disk now. */
  abandon(): void
  /** Variables that point this process's children at what was started here (STRIPE_*). */
  env: Record<string, string>
  stop(): Promise<void>
}

export async function ensureInfra(config: Config, opts: { ephemeral?: boolean; acceptJournalDamage?: boolean; known?: KnownCollections } = {}): Promise<Infra> {
  const started: StartedChild[] = []
  // The data folder is checked before anything starts: a folder that cannot be used stops here.
  // The engine and Redis run in process groups of their own (child.ts): a terminal's Ctrl-C must
  // not stop them before the last snapshot is written (infra.stop() stops them after it).
  const keep = !config.MONGO_URL && !opts.ephemeral && !config.EPHEMERAL
  const folder: OpenedFolder | null = keep ? await openDataFolder(config.DATA_DIR) : null
  // Queues and their jobs (forward retries, batch renders) are kept beside the snapshot: Redis's own append-only file.
  const redisDir = folder ? join(folder.dir, 'redis') : undefined
  if (redisDir) await mkdir(redisDir, { recursive: true })
  const [redisUrl, mongoUrl] = await Promise.all([
    config.REDIS_URL ??
      startRedisServer({ dir: redisDir, avoid: servicePorts(config) }).then((r) => {
        started.push(r.child)
        logger.info({ url: r.url }, 'started embedded redis-server')
        return r.url
      }),
    config.MONGO_URL ??
      startMongoEngine().then((m) => {
        started.push(m.child)
        logger.info({ url: m.url, dataDir: folder?.dir ?? null }, `started embedded MongoDB-compatible engine (${folder ? 'data kept' : 'data is not kept'})`)
        return m.url
      }),
  ]).catch(async (err) => {
    await Promise.all(started.map((c) => c.stop()))
    if (folder) await releaseLock(folder.dir)
    throw err
  })
  let kept: KeptStore | null = null
  if (folder) {
    try {
      kept = await keepStore({
        folder,
        mongoUrl,
        database: config.MONGO_DB,
        known: opts.known ?? { partitioned: [], plain: [] },
        intervalMs: config.SNAPSHOT_INTERVAL_MS,
        childPids: started.flatMap((c) => (c.proc.pid ? [c.proc.pid] : [])),
        acceptJournalDamage: opts.acceptJournalDamage || config.JOURNAL_ACCEPT_DAMAGE,
      })
    } catch (err) {
      // Never a half-started system: what was started goes, the folder stays as it was.
      await Promise.all(started.map((c) => c.stop()))
      await releaseLock(folder.dir)
      throw err
    }
  }
  // Without Stripe keys, local runs get the simulator (never in production: it upgrades for free).
  const sim =
    !config.STRIPE_SECRET_KEY && config.NODE_ENV !== 'production'
      ? await startStripeSimulator({ webhookUrls: webhookUrls(config), secretKey: config.STRIPE_SIMULATOR_KEY, port: config.STRIPE_SIMULATOR_PORT })
      : null
  if (sim) logger.info({ url: sim.url }, 'started embedded Stripe simulator (no real payments)')
  return {
    redisUrl,
    // A kept store is reached through its journal (journal-proxy.ts): every write is journaled.
    mongoUrl: kept?.url ?? mongoUrl,
    embedded: { redis: !config.REDIS_URL, mongo: !config.MONGO_URL },
    dataDir: folder?.dir ?? null,
    abandon: () => kept?.abandon(),
    stripe: sim?.url,
    env: sim ? { STRIPE_API_BASE: sim.url, STRIPE_SECRET_KEY: sim.secretKey, STRIPE_WEBHOOK_SECRET: sim.webhookSecret } : {},
    async stop() {
      await sim?.close()
      // The last snapshot, after every writer stopped and before the engine does.
      await kept?.close().catch((err) => logger.error({ err: String(err) }, 'final snapshot failed; the previous snapshot is kept'))
      await Promise.all(started.map((c) => c.stop()))
    },
  }
}

/** Every service's Stripe webhook on this host (Stripe sends each event to every endpoint). */
function webhookUrls(config: Config): string[] {
  const host = config.HOST === '0.0.0.0' || config.HOST === '::' ? '127.0.0.1' : config.HOST
  return [config.INVOICE_PORT, config.FLAGS_PORT, config.WEBHOOKS_PORT].map((p) => `http://${host}:${p}${WEBHOOK_PATH}`)
}

/** Ports this process's services and simulator were told to use: the embedded Redis must not take one. */
function servicePorts(config: Config): number[] {
  return [config.INVOICE_PORT, config.FLAGS_PORT, config.WEBHOOKS_PORT, config.WORKER_PORT, config.STRIPE_SIMULATOR_PORT].filter((p): p is number => typeof p === 'number')
}
