// The write journal of the embedded store: every write the engine acknowledged, appended to a
// segment file in DATA_DIR/journal/ before the acknowledgement is passed on (journal-proxy.ts),
// flushed to disk (fdatasync) at most a second later. A new segment begins with each snapshot;
// once that snapshot is in place the segments before it are deleted. At start the segments are
// replayed over the snapshot (journal-replay.ts). docs/embedded-store.md, "The write journal".
//
// A segment is a sequence of records: [length u32 LE][CRC-32 u32 LE][payload (BSON)]. Reading a
// segment never stops at a bad record: it resynchronises on the next whole record (its length, CRC
// and payload all check out) and reports the bytes it could not read (journal-recovery.ts decides
// whether they were a record torn by a crash, never acknowledged, or damage that lost records).
import { closeSync, fdatasync, fdatasyncSync, fsyncSync, openSync, readdirSync, readFileSync, unlinkSync, writeSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { crc32 } from 'node:zlib'
import { BSON } from 'mongodb'
import { commandOf } from './wire.ts'

export const JOURNAL_DIR = 'journal'
/** How often appended records are flushed to disk: what a power cut can lose (Redis's `appendfsync everysec`). */
export const FLUSH_EVERY_MS = 1_000
/** The commands a record can hold: the writes the proxy journals (journal-proxy.ts). */
export const JOURNALED_COMMANDS = new Set(['insert', 'update', 'delete', 'findAndModify'])

/** One acknowledged write: the OP_MSG's sections as sent, and what its reply said that replay must repeat. */
export interface JournalRecord {
  /** Sequence number, increasing by one per record over the folder's life (across restarts). */
  s: number
  /** The command's OP_MSG sections (wire.ts), exactly as the client sent them. */
  m: Buffer
  /** Statements whose upsert inserted, with the _id the engine gave: [statement index, _id]. */
  up?: [number, unknown][]
  /** Statements that failed (writeErrors): replay leaves them out. */
  err?: number[]
}

export const segmentName = (n: number) => `${String(n).padStart(8, '0')}.log`
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

export function syncDir(dir: string): void {
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

/** A whole record where it lies in its segment (`at`: its frame's first byte, `end`: the byte after it). */
export interface PlacedRecord extends JournalRecord {
  at: number
  end: number
}

/** Bytes of a segment that are not a whole record: from `at` up to the next whole record (or the end). */
export interface BadSpan {
  at: number
  end: number
  /** What was wrong at `at`, in words. */
  reason: string
  /** The length field says more bytes follow than the segment has: what a crash in the middle of an append leaves. */
  cutShort: boolean
}

type Attempt = { ok: true; rec: PlacedRecord } | { ok: false; reason: string; cutShort?: boolean; frameEnd?: number }

/** The payload of a frame whose CRC held, as a record; throws when it is not one. */
function payloadRecord(payload: Buffer): JournalRecord {
  const doc = BSON.deserialize(payload, { promoteValues: false })
  const m = doc.m
  if (!(m instanceof BSON.Binary)) throw new Error('no command bytes (m)')
  const s = Number(doc.s)
  if (!Number.isSafeInteger(s) || s < 1) throw new Error(`sequence number ${String(doc.s)}`)
  const rec: JournalRecord = { s, m: Buffer.from(m.buffer.buffer, m.buffer.byteOffset, m.position), up: doc.up as JournalRecord['up'], err: (doc.err as unknown[] | undefined)?.map(Number) }
  // Replay reads the command the same way: a record it could not send is no record.
  const cmd = commandOf(rec.m, { promoteValues: false, promoteLongs: false, promoteBuffers: false })
  const name = Object.keys(cmd)[0]
  if (!name || !JOURNALED_COMMANDS.has(name) || typeof cmd[name] !== 'string') throw new Error(`not a journaled write (${JSON.stringify(name)})`)
  return rec
}

function attempt(buf: Buffer, at: number): Attempt {
  const left = buf.length - at
  if (left < 8) return { ok: false, reason: `${left} byte(s), fewer than a record's 8-byte frame`, cutShort: true }
  const len = buf.readUInt32LE(at)
  if (len < 5) return { ok: false, reason: `its length field says ${len} bytes, fewer than any record` }
  if (left - 8 < len) return { ok: false, reason: `its length field says ${len} bytes follow, but only ${left - 8} do`, cutShort: true }
  const payload = buf.subarray(at + 8, at + 8 + len)
  if (crc32(payload) !== buf.readUInt32LE(at + 4)) return { ok: false, reason: `it fails its CRC-32 check (length field ${len})` }
  try {
    return { ok: true, rec: { ...payloadRecord(payload), at, end: at + 8 + len } }
  } catch (err) {
    return { ok: false, reason: `its frame and CRC are valid, but its payload is not a journal record (${(err as Error).message})`, frameEnd: at + 8 + len }
  }
}

/**
 * The next whole record at or after `from`. Cheap checks first (the length fits, the BSON's own
 * length agrees with it, the BSON ends in its 0 byte), the CRC and the payload only then.
 */
function nextWhole(buf: Buffer, from: number): PlacedRecord | null {
  for (let q = from; q + 8 + 5 <= buf.length; q++) {
    const len = buf.readUInt32LE(q)
    if (len < 5 || q + 8 + len > buf.length || buf.readUInt32LE(q + 8) !== len || buf[q + 8 + len - 1] !== 0) continue
    const got = attempt(buf, q)
    if (got.ok) return got.rec
  }
  return null
}

/**
 * Every whole record of one segment's bytes, and the spans between them that are not records. A
 * bad record never hides the ones after it: reading goes on at the end its frame gives when the
 * frame held (a CRC or payload that is wrong), or else at the next offset where a whole record
 * begins (a length field that is wrong).
 */
export function scanSegment(buf: Buffer): { records: PlacedRecord[]; bad: BadSpan[] } {
  const records: PlacedRecord[] = []
  const bad: BadSpan[] = []
  let at = 0
  while (at < buf.length) {
    const got = attempt(buf, at)
    if (got.ok) {
      records.push(got.rec)
      at = got.rec.end
      continue
    }
    // Where the frame says the next record begins, when that is one: exactly this record is skipped.
    let next: PlacedRecord | null = null
    if (got.frameEnd !== undefined) {
      const there = got.frameEnd < buf.length ? attempt(buf, got.frameEnd) : null
      next = there?.ok ? there.rec : null
      if (!next && got.frameEnd >= buf.length) {
        bad.push({ at, end: buf.length, reason: got.reason, cutShort: false })
        break
      }
      if (!next) next = nextWhole(buf, got.frameEnd)
    } else {
      const len = buf.length - at >= 8 ? buf.readUInt32LE(at) : 0
      const guess = at + 8 + len
      const there = len >= 5 && guess < buf.length ? attempt(buf, guess) : null
      next = there?.ok ? there.rec : nextWhole(buf, at + 1)
    }
    bad.push({ at, end: next ? next.at : buf.length, reason: got.reason, cutShort: !next && got.cutShort === true })
    if (!next) break
    records.push(next)
    at = next.end
  }
  return { records, bad }
}

/** One segment of the journal as read: its number, file, whole records and unreadable spans. */
export interface ReadSegment {
  n: number
  file: string
  size: number
  records: PlacedRecord[]
  bad: BadSpan[]
}

/** Every segment of the folder's journal, in order. */
export function readSegments(dataDir: string): ReadSegment[] {
  const dir = join(dataDir, JOURNAL_DIR)
  return segments(dir).map((n) => {
    const file = join(dir, segmentName(n))
    const buf = readFileSync(file)
    return { n, file, size: buf.length, ...scanSegment(buf) }
  })
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
