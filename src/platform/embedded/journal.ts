// The write journal of the embedded store: every write the engine acknowledged, appended to a
// segment file in DATA_DIR/journal/ before the acknowledgement is passed on (journal-proxy.ts),
// flushed to disk (fdatasync) at most a second later. A new segment begins with each snapshot;
// once that snapshot is in place the segments before it are deleted. At start the segments are
// replayed over the snapshot (journal-replay.ts). docs/embedded-store.md, "The write journal".
//
// A segment is a sequence of records: [length u32 LE][CRC-32 u32 LE][payload (BSON)]. A record
// cut short or failing its CRC (a crash in the middle of an append) ends its segment's replay.
import { closeSync, fdatasync, fdatasyncSync, fsyncSync, openSync, readdirSync, readFileSync, unlinkSync, writeSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { crc32 } from 'node:zlib'
import { BSON } from 'mongodb'

export const JOURNAL_DIR = 'journal'
/** How often appended records are flushed to disk: what a power cut can lose (Redis's `appendfsync everysec`). */
export const FLUSH_EVERY_MS = 1_000

/** One acknowledged write: the OP_MSG's sections as sent, and what its reply said that replay must repeat. */
export interface JournalRecord {
  /** Sequence number, increasing over the folder's life (across restarts). */
  s: number
  /** The command's OP_MSG sections (wire.ts), exactly as the client sent them. */
  m: Buffer
  /** Statements whose upsert inserted, with the _id the engine gave: [statement index, _id]. */
  up?: [number, unknown][]
  /** Statements that failed (writeErrors): replay leaves them out. */
  err?: number[]
}

const segmentName = (n: number) => `${String(n).padStart(8, '0')}.log`
const segmentNumber = (name: string) => (/^\d{8}\.log$/.test(name) ? Number(name.slice(0, 8)) : null)

export function segments(dir: string): number[] {
  let names: string[]
  try {
    names = readdirSync(dir)
  } catch {
    return []
  }
  return names.map(segmentNumber).filter((n): n is number => n !== null).sort((a, b) => a - b)
}

function syncDir(dir: string): void {
  const fd = openSync(dir, 'r')
  try {
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
}

export function encodeRecord(r: JournalRecord): Buffer {
  const payload = BSON.serialize({ s: r.s, m: new BSON.Binary(r.m), ...(r.up ? { up: r.up } : {}), ...(r.err ? { err: r.err } : {}) })
  const frame = Buffer.allocUnsafe(8)
  frame.writeUInt32LE(payload.length, 0)
  frame.writeUInt32LE(crc32(payload), 4)
  return Buffer.concat([frame, payload])
}

/** The whole records of one segment's bytes; `torn` when it ends in a partial or damaged record. */
export function decodeSegment(buf: Buffer): { records: JournalRecord[]; torn: boolean } {
  const records: JournalRecord[] = []
  let at = 0
  while (at < buf.length) {
    if (buf.length - at < 8) return { records, torn: true }
    const len = buf.readUInt32LE(at)
    if (len < 5 || buf.length - at - 8 < len) return { records, torn: true }
    const payload = buf.subarray(at + 8, at + 8 + len)
    if (crc32(payload) !== buf.readUInt32LE(at + 4)) return { records, torn: true }
    const doc = BSON.deserialize(payload, { promoteValues: false })
    const m = doc.m as BSON.Binary
    records.push({ s: Number(doc.s), m: Buffer.from(m.buffer.buffer, m.buffer.byteOffset, m.position), up: doc.up as JournalRecord['up'], err: (doc.err as unknown[] | undefined)?.map(Number) })
    at += 8 + len
  }
  return { records, torn: false }
}

/** Every record of the folder's segments in order, and the segments that ended torn. */
export function readJournal(dataDir: string): { records: JournalRecord[]; torn: number[] } {
  const dir = join(dataDir, JOURNAL_DIR)
  const records: JournalRecord[] = []
  const torn: number[] = []
  for (const n of segments(dir)) {
    const seg = decodeSegment(readFileSync(join(dir, segmentName(n))))
    records.push(...seg.records)
    if (seg.torn) torn.push(n)
  }
  return { records, torn }
}

export class Journal {
  private fd: number
  private segment: number
  private seq: number
  private dirty = false
  private syncing = false
  private readonly timer: NodeJS.Timeout
  private closed = false

  /** Opens a new segment after every existing one; `lastSeq` is the highest sequence number already used. */
  constructor(
    private readonly dataDir: string,
    lastSeq: number,
  ) {
    this.seq = lastSeq
    mkdirSync(this.dir, { recursive: true })
    this.segment = (segments(this.dir).at(-1) ?? 0) + 1
    this.fd = this.openSegment(this.segment)
    this.timer = setInterval(() => this.flushSoon(), FLUSH_EVERY_MS)
    this.timer.unref()
  }

  private get dir(): string {
    return join(this.dataDir, JOURNAL_DIR)
  }

  private openSegment(n: number): number {
    const fd = openSync(join(this.dir, segmentName(n)), 'a')
    // The new file's name must survive a power cut too, or its records would.
    syncDir(this.dir)
    return fd
  }

  /** The next sequence number (records are numbered in the order the engine's answers came back). */
  next(): number {
    return ++this.seq
  }

  get lastSeq(): number {
    return this.seq
  }

  /**
   * Append records before their acknowledgements are passed on. A synchronous write: it lands in
   * the kernel's page cache (a killed process loses nothing of it) in microseconds, and one call
   * carries every record of one read from the engine (group commit).
   */
  append(records: JournalRecord[]): void {
    if (!records.length || this.closed) return
    const buf = records.length === 1 ? encodeRecord(records[0]!) : Buffer.concat(records.map(encodeRecord))
    for (let at = 0; at < buf.length; ) at += writeSync(this.fd, buf, at)
    this.dirty = true
  }

  private flushSoon(): void {
    if (!this.dirty || this.syncing || this.closed) return
    this.dirty = false
    this.syncing = true
    fdatasync(this.fd, (err) => {
      this.syncing = false
      if (err) this.dirty = true
    })
  }

  /** Start a new segment (at a snapshot's start); returns its number. */
  rotate(): number {
    fdatasyncSync(this.fd)
    closeSync(this.fd)
    this.segment++
    this.fd = this.openSegment(this.segment)
    this.dirty = false
    return this.segment
  }

  /** Delete the segments before `n` (a snapshot that began at segment `n` is in place). */
  dropBefore(n: number): void {
    for (const s of segments(this.dir)) if (s < n) unlinkSync(join(this.dir, segmentName(s)))
  }

  /** Flush now, synchronously (an exit that cannot wait). */
  flushSync(): void {
    if (!this.closed) fdatasyncSync(this.fd)
  }

  close(): void {
    if (this.closed) return
    clearInterval(this.timer)
    fdatasyncSync(this.fd)
    closeSync(this.fd)
    this.closed = true
  }
}
