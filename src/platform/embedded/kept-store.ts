// Keeping the embedded engine's data across runs of `start`: restore the data folder's snapshot
// into the freshly started engine, snapshot it every SNAPSHOT_INTERVAL_MS while running (bounds
// what a crash loses), and once more at a clean stop, after every writer has stopped (nothing
// acknowledged is lost). docs/embedded-store.md says why and what each step costs.
import { join } from 'node:path'
import { MongoClient } from 'mongodb'
import { logger } from '../logger.ts'
import { DataFolderError, recordChildren, releaseLock, swapIn, type OpenedFolder } from './data-folder.ts'
import { restoreSnapshot, type KnownCollections } from './snapshot.ts'
import { snapshotThread } from './snapshot-client.ts'

/**
 * Share of wall time a periodic snapshot spends reading (snapshot.ts rests in between): a store's
 * whole read in one burst took engine time the running APIs were waiting for.
 */
const PERIODIC_PACE = 1 / 3


export interface KeptStore {
  /** Write a snapshot now (one at a time: a call during a running snapshot waits for it instead). */
  snapshot(): Promise<void>
  /** Final snapshot and release of the folder; call after every writer has stopped. */
  close(): Promise<void>
  /** How long the final snapshot may take: twice the last one, and 10 s more. */
  closeBudgetMs(): number
}

export async function keepStore(opts: {
  folder: OpenedFolder
  mongoUrl: string
  database: string
  known: KnownCollections
  intervalMs: number
  childPids: number[]
}): Promise<KeptStore> {
  const { folder } = opts
  await recordChildren(folder.dir, opts.childPids)
  if (folder.snapshot) {
    if (folder.snapshot.manifest.database !== opts.database) {
      throw new DataFolderError(
        `the snapshot in ${folder.snapshotDir} holds database ${folder.snapshot.manifest.database}, but MONGO_DB is ${opts.database}. Set MONGO_DB=${folder.snapshot.manifest.database}, or move the folder aside.`,
      )
    }
    const client = new MongoClient(opts.mongoUrl, { serverSelectionTimeoutMS: 5_000 })
    try {
      await client.connect()
      const started = performance.now()
      const n = await restoreSnapshot(client.db(opts.database), folder.snapshot)
      logger.info({ documents: n, ms: Math.round(performance.now() - started), from: folder.snapshot.manifest.created_at }, 'restored the embedded store from its snapshot')
    } finally {
      await client.close()
    }
    folder.snapshot = null // its buffers are no longer needed
  }

  const thread = snapshotThread({ mongoUrl: opts.mongoUrl, database: opts.database, known: opts.known })

  let running: Promise<void> | null = null
  /** The last snapshot's reading time without its rests (what it cost the engine). */
  let lastBusyMs = 0
  const snapshot = (pace = PERIODIC_PACE): Promise<void> => {
    running ??= (async () => {
      const started = performance.now()
      const m = await thread.write(join(folder.dir, 'snapshot.new'), pace)
      await swapIn(folder.dir)
      const lastMs = performance.now() - started
      lastBusyMs = lastMs * pace
      const docs = m.collections.reduce((n, c) => n + c.count, 0)
      logger[lastMs > 1_000 ? 'info' : 'debug']({ documents: docs, ms: Math.round(lastMs) }, 'snapshot written')
    })().finally(() => (running = null))
    return running
  }
  // A snapshot reads every document, so it costs more as the store grows: the next one waits at
  // least ten times as long as the last one's reading took, which keeps snapshots under a tenth of
  // the engine's time (and is what a crash can lose beyond SNAPSHOT_INTERVAL_MS on a large store).
  let timer: NodeJS.Timeout
  const schedule = () => {
    timer = setTimeout(() => {
      snapshot()
        .catch((err) => logger.error({ err: String(err) }, 'periodic snapshot failed; the previous one is kept'))
        .finally(schedule)
    }, Math.max(opts.intervalMs, 10 * lastBusyMs))
    timer.unref()
  }
  schedule()

  return {
    snapshot: () => snapshot(),
    // The last snapshot, at a stop, reads at full speed: every writer has stopped.
    closeBudgetMs: () => 2 * lastBusyMs + 10_000,
    async close() {
      clearTimeout(timer)
      // A periodic snapshot under way finishes at full speed: the stop is waiting for it.
      thread.hurry()
      await running?.catch(() => undefined)
      try {
        await snapshot(1)
      } finally {
        await thread.stop()
      }
      await releaseLock(folder.dir)
    },
  }
}
