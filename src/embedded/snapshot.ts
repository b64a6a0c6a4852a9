// Snapshots of the embedded engine's data: every collection of one database written as a file of
// concatenated BSON documents (the driver hands them over raw, so nothing is decoded on the way
// out), with a manifest naming each file, its document count, size and SHA-256. A snapshot is
// written into a fresh folder, flushed to disk, and only then swapped in (data-folder.ts), so a
// crash mid-write leaves the previous snapshot as it was.
import { createHash } from 'node:crypto'
import { link, mkdir, open, readFile, readdir, type FileHandle } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { BSON, type Db } from 'mongodb'
import { eachLimit } from '../platform/store/each-limit.ts'
import { readLayout } from '../platform/store/partitioned.ts'

export const SNAPSHOT_FORMAT = 'queueworks-embedded-snapshot'
export const SNAPSHOT_VERSION = 1
export const MANIFEST = 'manifest.json'

/**
 * Every read of a snapshot carries this comment: the journal's proxy makes it a clean cut of the
 * journal for that collection (journal-proxy.ts).
 */
export const CUT_COMMENT = 'queueworks-snapshot-cut'
/** Beside the manifest: per collection, the last journal record the snapshot holds (journal-replay.ts). */
export const CUTS = 'cuts.json'

/** Collections read at once by a snapshot at full speed (the engine locks per collection). */
const FULL_SPEED_PARALLEL = 8

/** Documents per read of a snapshot (a getMore): small enough that one read is a short job for the engine. */
const SNAPSHOT_BATCH = 500

export interface ManifestEntry {
  name: string
  file: string
  count: number
  bytes: number
  sha256: string
}

export interface Manifest {
  format: string
  version: number
  /** When reading began: everything acknowledged before it is in the snapshot. */
  started_at: string
  created_at: string
  database: string
  collections: ManifestEntry[]
}

/** The collections a snapshot saves: growing partitioned ones by base name, then every other one. */
export interface KnownCollections {
  partitioned: string[]
  plain: string[]
}

/** Why a snapshot cannot be used; the message names the file and what is wrong. */
export class DamagedSnapshotError extends Error {}

/**
 * The physical collections to save, growing data first: a snapshot taken while the system runs is
 * not a point in time, and reading the counters (endpoint request ids, quotas) after the data they
 * count means a restored counter is never behind what it counts.
 */
export async function collectionsToSave(db: Db, known: KnownCollections): Promise<string[]> {
  const parted: string[] = []
  for (const base of known.partitioned) parted.push(...(await readLayout(db, base)).names())
  return [...new Set([...parted, ...known.plain])]
}

async function syncDir(dir: string): Promise<void> {
  const fh = await open(dir, 'r')
  try {
    await fh.sync()
  } finally {
    await fh.close()
  }
}

/**
 * Write every named collection of `db` into `dir` (created; must not exist) and flush it.
 * `pace()` (0–1] is the share of wall time the snapshot may spend reading: below 1 it rests after
 * each batch in proportion to the time that batch took, so that the engine serves the running
 * APIs between batches rather than a whole store's read in one burst. It is asked again at every
 * rest: a stop hurries a snapshot already under way (snapshot-thread.ts).
 */
/**
 * What a snapshot may take over from the one before it: the collections not written since that
 * one read them (the journal's proxy knows: kept-store.ts). Their files are hard-linked, not read.
 */
export interface Reuse {
  dir: string
  manifest: Manifest
  clean: Set<string>
}

/** The snapshot in place beside `dir` (…/snapshot.new → …/snapshot), to take `clean` collections over from. */
export async function reuseFrom(dir: string, clean: string[]): Promise<Reuse | undefined> {
  if (!clean.length) return undefined
  const from = join(dirname(dir), 'snapshot')
  try {
    return { dir: from, manifest: JSON.parse(await readFile(join(from, MANIFEST), 'utf8')) as Manifest, clean: new Set(clean) }
  } catch {
    return undefined // none to take over from: everything is read
  }
}

export async function writeSnapshot(db: Db, names: string[], dir: string, pace: () => number = () => 1, reuse?: Reuse): Promise<Manifest> {
  await mkdir(dir, { recursive: false })
  const startedAt = new Date().toISOString()
  const stamp = startedAt.replace(/\D/g, '')
  const entries: ManifestEntry[] = []
  let busySince = performance.now()
  const rest = async () => {
    const share = Math.min(1, Math.max(0.05, pace()))
    if (share >= 1) return
    const busy = performance.now() - busySince
    if (busy >= 5) {
      await new Promise((r) => setTimeout(r, (busy * (1 - share)) / share))
      busySince = performance.now()
    }
  }
  const saved: (ManifestEntry | undefined)[] = []
  // A snapshot at full speed (a stop: nothing writes) reads several collections at once; a paced
  // one reads them in order, the growing data before the counters (above).
  const before = new Map(reuse?.manifest.collections.map((e) => [e.name, e]))
  const toRead: [number, string][] = []
  for (const [i, name] of names.entries()) {
    if (!reuse?.clean.has(name)) {
      toRead.push([i, name])
      continue
    }
    const prev = before.get(name)
    if (prev) {
      await link(join(reuse.dir, prev.file), join(dir, prev.file))
      saved[i] = prev
    }
  }
  await eachLimit(toRead, pace() >= 1 ? FULL_SPEED_PARALLEL : 1, async ([i, name]) => {
    // Named by position and snapshot: never the name of a file taken over from an earlier one.
    const file = `${String(i).padStart(4, '0')}-${stamp}.bson`
    // Opened at the first document: most slots of a small store are empty and get no file.
    let fh: FileHandle | null = null
    const hash = createHash('sha256')
    let count = 0
    let bytes = 0
    try {
      // raw: the driver's BSON bytes as they came off the wire, written out as they are.
      const cursor = db.collection(name).find({}, { raw: true, batchSize: SNAPSHOT_BATCH, comment: CUT_COMMENT })
      let pending: Buffer[] = []
      let pendingBytes = 0
      for await (const doc of cursor) {
        const buf = doc as unknown as Buffer
        pending.push(buf)
        pendingBytes += buf.length
        hash.update(buf)
        count++
        bytes += buf.length
        if (pendingBytes > 1 << 20) {
          fh ??= await open(join(dir, file), 'w')
          await fh.write(Buffer.concat(pending))
          pending = []
          pendingBytes = 0
        }
        if (count % SNAPSHOT_BATCH === 0) await rest()
      }
      await rest()
      if (pending.length) {
        fh ??= await open(join(dir, file), 'w')
        await fh.write(Buffer.concat(pending))
      }
      await fh?.sync()
    } finally {
      await fh?.close()
    }
    if (count > 0) saved[i] = { name, file, count, bytes, sha256: hash.digest('hex') }
  })
  for (const e of saved) if (e) entries.push(e)
  const manifest: Manifest = { format: SNAPSHOT_FORMAT, version: SNAPSHOT_VERSION, started_at: startedAt, created_at: new Date().toISOString(), database: db.databaseName, collections: entries }
  const fh = await open(join(dir, MANIFEST), 'w')
  try {
    await fh.writeFile(JSON.stringify(manifest, null, 2))
    await fh.sync()
  } finally {
    await fh.close()
  }
  await syncDir(dir)
  return manifest
}

/** Read and check a snapshot folder completely (manifest, every file's size and checksum) before anything is restored. */
export async function readSnapshot(dir: string): Promise<{ manifest: Manifest; files: Map<string, Buffer> }> {
  let manifest: Manifest
  try {
    manifest = JSON.parse(await readFile(join(dir, MANIFEST), 'utf8')) as Manifest
  } catch (err) {
    throw new DamagedSnapshotError(`${join(dir, MANIFEST)} is missing or not valid JSON (${(err as Error).message})`)
  }
  if (manifest?.format !== SNAPSHOT_FORMAT) throw new DamagedSnapshotError(`${join(dir, MANIFEST)} is not a queueworks snapshot manifest`)
  if (manifest.version !== SNAPSHOT_VERSION) {
    throw new DamagedSnapshotError(`${dir} was written in snapshot format version ${manifest.version}; this build reads version ${SNAPSHOT_VERSION}`)
  }
  if (!Array.isArray(manifest.collections)) throw new DamagedSnapshotError(`${join(dir, MANIFEST)} lists no collections`)
  const present = new Set(await readdir(dir))
  const files = new Map<string, Buffer>()
  for (const e of manifest.collections) {
    const path = join(dir, e.file)
    if (!present.has(e.file)) throw new DamagedSnapshotError(`${path} (collection ${e.name}) is missing`)
    const buf = await readFile(path)
    if (buf.length !== e.bytes) throw new DamagedSnapshotError(`${path} (collection ${e.name}) has ${buf.length} bytes, the manifest says ${e.bytes}`)
    if (createHash('sha256').update(buf).digest('hex') !== e.sha256) throw new DamagedSnapshotError(`${path} (collection ${e.name}) does not match its checksum`)
    files.set(e.name, buf)
  }
  return { manifest, files }
}

/** Split a file of concatenated BSON documents; throws on a torn document. */
export function* bsonDocuments(buf: Buffer): Generator<Buffer> {
  let at = 0
  while (at < buf.length) {
    if (at + 5 > buf.length) throw new DamagedSnapshotError('a BSON document is cut short')
    const len = buf.readInt32LE(at)
    if (len < 5 || at + len > buf.length) throw new DamagedSnapshotError('a BSON document is cut short')
    yield buf.subarray(at, at + len)
    at += len
  }
}

/** Collections restored at once: the engine locks per collection, so loads of different slots overlap. */
const RESTORE_PARALLEL = 8
/** Documents per insertMany: the engine copies the collection once per write, so few large writes. */
const RESTORE_BATCH = 10_000

/**
 * Load a checked snapshot into an empty database. Values keep their BSON types (ints, longs,
 * doubles, binaries). Collections load in parallel and each in few large batches: a start from a
 * snapshot of 120,000 documents spread over ~520 collections is bound by round trips and by the
 * engine's copy per write, not by the bytes (docs/embedded-store.md has the figures).
 */
export async function restoreSnapshot(
  db: Db,
  snap: { manifest: Manifest; files: Map<string, Buffer> },
  /** For the restore benchmark's reference run (one collection at a time, batches of 1,000). */
  opts: { parallel?: number; batch?: number } = {},
): Promise<number> {
  const batchSize = opts.batch ?? RESTORE_BATCH
  await eachLimit(snap.manifest.collections, opts.parallel ?? RESTORE_PARALLEL, async (e) => {
    const coll = db.collection(e.name)
    let batch: BSON.Document[] = []
    let bytes = 0
    for (const raw of bsonDocuments(snap.files.get(e.name)!)) {
      batch.push(BSON.deserialize(raw, { promoteValues: false, promoteLongs: false, promoteBuffers: false }))
      bytes += raw.length
      // The driver splits a batch over 48 MB messages itself; a cap on bytes keeps each command's memory sane.
      if (batch.length === batchSize || bytes > 32 << 20) {
        await coll.insertMany(batch, { ordered: true })
        batch = []
        bytes = 0
      }
    }
    if (batch.length) await coll.insertMany(batch, { ordered: true })
  })
  return snap.manifest.collections.reduce((n, e) => n + e.count, 0)
}
