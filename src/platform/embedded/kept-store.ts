// Keeping the embedded engine's data across runs of `start`: restore the data folder's snapshot
// into the freshly started engine, snapshot it every SNAPSHOT_INTERVAL_MS while running (bounds
// what a crash loses), and once more at a clean stop, after every writer has stopped (nothing
// acknowledged is lost). docs/embedded-store.md says why and what each step costs.
import { join } from 'node:path'
import { MongoClient } from 'mongodb'
import { logger } from '../logger.ts'
import { DataFolderError, recordChildren, releaseLock, swapIn, type OpenedFolder } from './data-folder.ts'
import { collectionsToSave, restoreSnapshot, writeSnapshot } from './snapshot.ts'

/** The collections a snapshot saves: growing partitioned ones by base name, then every other one. */
export interface KnownCollections {
  partitioned: string[]
  plain: string[]
}

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
  const client = new MongoClient(opts.mongoUrl, { serverSelectionTimeoutMS: 5_000 })
  await client.connect()
  const db = client.db(opts.database)
  if (folder.snapshot) {
    if (folder.snapshot.manifest.database !== opts.database) {
      await client.close()
      throw new DataFolderError(
        `the snapshot in ${folder.snapshotDir} holds database ${folder.snapshot.manifest.database}, but MONGO_DB is ${opts.database}. Set MONGO_DB=${folder.snapshot.manifest.database}, or move the folder aside.`,
      )
    }
    const started = performance.now()
    const n = await restoreSnapshot(db, folder.snapshot)
    logger.info({ documents: n, ms: Math.round(performance.now() - started), from: folder.snapshot.manifest.created_at }, 'restored the embedded store from its snapshot')
    folder.snapshot = null // its buffers are no longer needed
  }

  let running: Promise<void> | null = null
  let lastMs = 0
  const snapshot = (): Promise<void> => {
    running ??= (async () => {
      const started = performance.now()
      const names = await collectionsToSave(db, opts.known)
      const m = await writeSnapshot(db, names, join(folder.dir, 'snapshot.new'))
      await swapIn(folder.dir)
      lastMs = performance.now() - started
      const docs = m.collections.reduce((n, c) => n + c.count, 0)
      logger[lastMs > 1_000 ? 'info' : 'debug']({ documents: docs, ms: Math.round(lastMs) }, 'snapshot written')
    })().finally(() => (running = null))
    return running
  }
  // A snapshot reads every document, so it costs more as the store grows: the next one waits at
  // least ten times as long as the last took, which keeps snapshots under a tenth of the engine's
  // time (and is what a crash can lose beyond SNAPSHOT_INTERVAL_MS on a large store).
  let timer: NodeJS.Timeout
  const schedule = () => {
    timer = setTimeout(() => {
      snapshot()
        .catch((err) => logger.error({ err: String(err) }, 'periodic snapshot failed; the previous one is kept'))
        .finally(schedule)
    }, Math.max(opts.intervalMs, 10 * lastMs))
    timer.unref()
  }
  schedule()

  return {
    snapshot,
    closeBudgetMs: () => 2 * lastMs + 10_000,
    async close() {
      clearTimeout(timer)
      await running?.catch(() => undefined)
      await snapshot()
      await client.close()
      await releaseLock(folder.dir)
    },
  }
}
