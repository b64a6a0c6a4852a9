// Keeping the embedded engine's data across runs of `start`: restore the data folder's snapshot
// into the freshly started engine and replay the write journal over it, journal every
// acknowledged write while running (a crash loses at most the last second), snapshot every
// SNAPSHOT_INTERVAL_MS (bounds the journal, and so the time a start takes), and once more at a
// clean stop, after every writer has stopped. docs/embedded-store.md says why and what each step costs.
import { existsSync, readFileSync } from 'node:fs'
import { open } from 'node:fs/promises'
import { join } from 'node:path'
import { MongoClient } from 'mongodb'
import { logger } from '../platform/logger.ts'
import { DataFolderError, recordChildren, releaseLock, swapIn, type OpenedFolder } from './data-folder.ts'
import { CUTS, collectionsToSave, restoreSnapshot, reuseFrom, writeSnapshot, type KnownCollections } from './snapshot.ts'
import { snapshotThread } from './snapshot-client.ts'
import { Journal } from './journal.ts'
import { recoverJournal } from './journal-recovery.ts'
import { replayJournal } from './journal-replay.ts'
import { startJournalProxy } from './journal-proxy.ts'

/**
 * Share of wall time a periodic snapshot spends reading (snapshot.ts rests in between): a store's
 * whole read in one burst took engine time the running APIs were waiting for.
 */
const PERIODIC_PACE = 1 / 3


export interface KeptStore {
  /** Where every client connects: the journal's proxy in front of the engine. */
  url: string
  /** Write a snapshot now (one at a time: a call during a running snapshot waits for it instead). */
  snapshot(): Promise<void>
  /** Final snapshot and release of the folder; call after every writer has stopped. */
  close(): Promise<void>
  /** An exit that cannot wait for close(): flush the journal to disk now. */
  abandon(): void
}

export async function keepStore(opts: {
  folder: OpenedFolder
  mongoUrl: string
  database: string
  known: KnownCollections
  intervalMs: number
  childPids: number[]
  /** Start even when the journal is damaged, without what the damage held (journal-recovery.ts). */
  acceptJournalDamage?: boolean
}): Promise<KeptStore> {
  const { folder } = opts
  await recordChildren(folder.dir, opts.childPids)
  // The cuts are read before anything is restored: a folder that cannot be used stops here.
  const cutsPath = join(folder.snapshotDir, CUTS)
  let cuts: Record<string, number> | null = null
  if (folder.snapshot && existsSync(cutsPath)) {
    try {
      cuts = JSON.parse(readFileSync(cutsPath, 'utf8')) as Record<string, number>
    } catch {
      throw new DataFolderError(`${cutsPath} is damaged (not valid JSON). Move the data folder aside to start with an empty store.`)
    }
  }
  // Damage to the journal stops here too, unless its loss is accepted (nothing has started yet).
  const journaled = recoverJournal(folder.dir, { accept: opts.acceptJournalDamage === true, floor: Math.max(0, ...Object.values(cuts ?? {})) })
  const client = new MongoClient(opts.mongoUrl, { serverSelectionTimeoutMS: 5_000 })
  let lastSeq = 0
  /** Collections the replay changed since the snapshot: the next snapshot reads them again. */
  let touched = new Set<string>()
  try {
    await client.connect()
    if (folder.snapshot) {
      if (folder.snapshot.manifest.database !== opts.database) {
        throw new DataFolderError(
          `the snapshot in ${folder.snapshotDir} holds database ${folder.snapshot.manifest.database}, but MONGO_DB is ${opts.database}. Set MONGO_DB=${folder.snapshot.manifest.database}, or move the folder aside.`,
        )
      }
      const started = performance.now()
      const n = await restoreSnapshot(client.db(opts.database), folder.snapshot)
      logger.info({ documents: n, ms: Math.round(performance.now() - started), from: folder.snapshot.manifest.created_at }, 'restored the embedded store from its snapshot')
      folder.snapshot = null // its buffers are no longer needed
    }
    const started = performance.now()
    const replayed = await replayJournal(client.db(opts.database), journaled.records, cuts)
    lastSeq = replayed.lastSeq
    touched = replayed.touched
    if (replayed.applied) logger.info({ writes: replayed.applied, ms: Math.round(performance.now() - started) }, 'replayed the journal over the snapshot (the last run did not stop cleanly)')
  } finally {
    await client.close()
  }

  const journal = new Journal(folder.dir, lastSeq)
  const proxy = await startJournalProxy({ engineUrl: opts.mongoUrl, journal, database: opts.database })
  const thread = snapshotThread({ mongoUrl: proxy.url, database: opts.database, known: opts.known })

  let running: Promise<void> | null = null
  /** The last snapshot's reading time without its rests (what it cost the engine). */
  let lastBusyMs = 0
  /** The cuts of the snapshot in place (null: none, or one from before the journal). */
  let inPlace = cuts
  /**
   * `inProcess`: read on this thread, over a connection of its own (the stop's snapshot: nothing
   * else runs then, and a thread would first have to load).
   */
  const snapshot = (pace = PERIODIC_PACE, inProcess = false): Promise<void> => {
    running ??= (async () => {
      const started = performance.now()
      // Records from here on go to a new segment; the older ones go once this snapshot is in place.
      const segment = journal.rotate()
      proxy.beginCuts()
      // Collections not written since the snapshot in place read them are taken over from it, with their cuts.
      const prev = inPlace
      const clean = prev ? Object.keys(prev).filter((c) => !touched.has(c) && proxy.lastWrite(c) <= prev[c]!) : []
      const dir = join(folder.dir, 'snapshot.new')
      let taken: Record<string, number> = {}
      let m
      try {
        m = inProcess ? await snapshotHere(proxy.url, opts.database, opts.known, dir, clean) : await thread.write(dir, pace, clean)
      } finally {
        taken = proxy.endCuts()
      }
      const next = { ...Object.fromEntries(clean.map((c) => [c, prev![c]!])), ...taken }
      await writeCuts(dir, next)
      await swapIn(folder.dir)
      journal.dropBefore(segment)
      inPlace = next
      touched = new Set()
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
    url: proxy.url,
    snapshot: () => snapshot(),
    abandon: () => journal.flushSync(),
    async close() {
      clearTimeout(timer)
      // A periodic snapshot under way finishes at full speed: the stop is waiting for it.
      thread.hurry()
      await running?.catch(() => undefined)
      try {
        // The last snapshot, at full speed: every writer has stopped. Should it fail, the journal
        // still holds every acknowledged write, and the next start replays it.
        await snapshot(1, true)
      } finally {
        await thread.stop()
        await proxy.close()
        journal.close()
      }
      await releaseLock(folder.dir)
    },
  }
}

/** A snapshot read on this thread at full speed. */
async function snapshotHere(url: string, database: string, known: KnownCollections, dir: string, clean: string[]) {
  const client = new MongoClient(url, { serverSelectionTimeoutMS: 5_000, maxPoolSize: 10 })
  try {
    await client.connect()
    const db = client.db(database)
    return await writeSnapshot(db, await collectionsToSave(db, known), dir, () => 1, await reuseFrom(dir, clean))
  } finally {
    await client.close()
  }
}

/** The snapshot's cuts beside its manifest, on disk before the snapshot is swapped in. */
async function writeCuts(dir: string, cuts: Record<string, number>): Promise<void> {
  const fh = await open(join(dir, CUTS), 'w')
  try {
    await fh.writeFile(JSON.stringify(cuts))
    await fh.sync()
  } finally {
    await fh.close()
  }
  const d = await open(dir, 'r')
  try {
    await d.sync()
  } finally {
    await d.close()
  }
}
