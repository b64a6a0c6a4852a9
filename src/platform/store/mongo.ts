// MongoDB: the source of truth. Each domain declares its indexes; they are created at start.
// A store outage must reach clients as a 503 within seconds, not a 500 or a hung request:
// operations give up after SELECTION_TIMEOUT_MS, and isMongoUnavailable tells those errors apart.
import { eachLimit } from './each-limit.ts'
import { MongoClient, MongoNetworkError, MongoServerError, MongoServerSelectionError, type Db, type IndexDescription } from 'mongodb'
import { physicalNames } from './partitioned.ts'

export type IndexSpec = {
  collection: string
  indexes: IndexDescription[]
  /** A growing collection spread over this many slots on the embedded engine (partitioned.ts); 1 on MongoDB. */
  partitions?: number
  /**
   * Indexes (by name) not built on the embedded engine. The engine answers no query faster for an
   * index (it scans), but every write re-checks each index over the whole collection: on a hot
   * collection an index only costs there (docs/embedded-store.md). Only for indexes that nothing
   * relies on for uniqueness on the engine.
   */
  notOnEngine?: string[]
}

/** How long an operation waits for a reachable server before failing (and the client gets a 503). */
const SELECTION_TIMEOUT_MS = 2_500
/** At start the store may still be coming up (compose, a restart): keep trying this long. */
const CONNECT_PATIENCE_MS = 30_000

export async function connectMongo(url: string, dbName: string): Promise<{ client: MongoClient; db: Db }> {
  const deadline = Date.now() + CONNECT_PATIENCE_MS
  for (;;) {
    const client = new MongoClient(url, {
      serverSelectionTimeoutMS: SELECTION_TIMEOUT_MS,
      connectTimeoutMS: 5_000,
      maxPoolSize: 50,
    })
    try {
      await client.connect()
      return { client, db: client.db(dbName) }
    } catch (err) {
      await client.close().catch(() => undefined)
      if (!(err instanceof MongoServerSelectionError) || Date.now() > deadline) throw err
    }
  }
}

/** Collections whose indexes are created at once: a partitioned layout has hundreds of them. */
const INDEX_PARALLEL = 8

export async function ensureIndexes(db: Db, specs: IndexSpec[], opts: { embedded: boolean; parallel?: number }): Promise<void> {
  const work = specs.flatMap((spec) => {
    const indexes = opts.embedded ? spec.indexes.filter((i) => !spec.notOnEngine?.includes(i.name!)) : spec.indexes
    return indexes.length ? physicalNames(db, spec.collection).map((name) => ({ name, indexes })) : []
  })
  await eachLimit(work, opts.parallel ?? INDEX_PARALLEL, async ({ name, indexes }) => {
    await db.collection(name).createIndexes(indexes)
  })
}

export function isDuplicateKey(err: unknown): boolean {
  return err instanceof MongoServerError && err.code === 11000
}

/**
 * Server answers that mean "not available right now" (shutting down, stepping down, unreachable
 * hosts): the codes the driver itself treats as retryable state changes.
 */
const UNAVAILABLE_CODES = new Set([6, 7, 89, 91, 189, 9001, 10107, 11600, 11602, 13435, 13436])
/** Driver errors without an exported class: its pool's wait queue and a pool closed under us. */
const UNAVAILABLE_NAMES = new Set(['MongoWaitQueueTimeoutError', 'MongoPoolClosedError', 'MongoTopologyClosedError', 'MongoNotConnectedError'])

/** The error (or one it wraps) says MongoDB cannot be reached or cannot serve: a 503, not a 500. */
export function isMongoUnavailable(err: unknown): boolean {
  for (let e = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    // MongoNetworkError covers timeouts and a cleared pool (PoolClearedError) too.
    if (e instanceof MongoNetworkError || e instanceof MongoServerSelectionError) return true
    if (UNAVAILABLE_NAMES.has(e.name)) return true
    if (e instanceof MongoServerError && typeof e.code === 'number' && UNAVAILABLE_CODES.has(e.code)) return true
  }
  return false
}
