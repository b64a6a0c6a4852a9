// The process-wide context every route, job and script receives: config, connections, queues.
// Built once per process (or per test file), closed once.
import type { Db, MongoClient } from 'mongodb'
import type { Config } from './config.ts'
import { connectMongo, ensureIndexes, type IndexSpec } from './store/mongo.ts'
import { QueueRegistry } from './queue/queues.ts'
import { isEmbeddedEngine, loadLayouts } from './store/partitioned.ts'
import { createRedis, redisReady, type RedisClient } from './redis/redis.ts'
import { createStripeClient, type Stripe } from './billing/stripe-client.ts'
import { ConsumerWatch } from './queue/consumers.ts'

export interface Platform {
  config: Config
  redisUrl: string
  mongoUrl: string
  mongo: MongoClient
  db: Db
  /** Fail-fast connection for request paths: rate limits, caches, queue producers. */
  redis: RedisClient
  queues: QueueRegistry
  /** Live workers of the queues this process's requests wait on (consumers.ts). */
  consumers: ConsumerWatch
  /** Stripe client (the simulator's locally); null when billing is not configured. */
  stripe: Stripe | null
  close(): Promise<void>
}

export async function createPlatform(opts: {
  config: Config
  redisUrl: string
  mongoUrl: string
  indexes: IndexSpec[]
  /** Queues to open at start (every queue this process may add to: queues.ts says why). */
  queues?: string[]
}): Promise<Platform> {
  const { config, redisUrl, mongoUrl } = opts
  const stripe = createStripeClient(config)
  const { client, db } = await connectMongo(mongoUrl, config.MONGO_DB)
  const embedded = await isEmbeddedEngine(db)
  await loadLayouts(db, wantedLayouts(embedded, config, opts.indexes))
  await ensureIndexes(db, opts.indexes, { embedded })
  const redis = createRedis(redisUrl, 'producer')
  await redisReady(redis)
  const queues = new QueueRegistry(redisUrl, config.QUEUE_PREFIX, redis)
  await queues.open(opts.queues ?? [])
  const platform: Platform = {
    config,
    redisUrl,
    mongoUrl,
    mongo: client,
    db,
    redis,
    queues,
    consumers: new ConsumerWatch(() => platform),
    stripe,
    async close() {
      platform.consumers.close()
      await queues.close()
      redis.disconnect()
      await client.close()
    },
  }
  return platform
}

/** Slot counts for a database's first use: STORE_PARTITIONS, else each spec's own on the engine, 1 on MongoDB. */
function wantedLayouts(embedded: boolean, config: Config, specs: IndexSpec[]): Record<string, number> {
  const parted = specs.filter((s) => s.partitions)
  return Object.fromEntries(parted.map((s) => [s.collection, config.STORE_PARTITIONS ?? (embedded ? s.partitions! : 1)]))
}
