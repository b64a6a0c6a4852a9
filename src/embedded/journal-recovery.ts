// What `start` makes of the write journal on disk (journal.ts) before it replays it: which bytes
// could not be read, and whether that lost anything that had been acknowledged. A record cut
// short at the very end (a crash in the middle of its append) was never acknowledged, since an
// answer waits for its append: it is left out with a warning, as always. Anything else — bytes
// that are not a record with whole records after them, or a gap in the records' numbers — is
// damage: `start` refuses, naming each file, byte range and lost record number, unless told to
// accept the loss; then the damaged segments are kept aside in DATA_DIR/journal-damaged/, each
// rewritten in place with its whole records only, and the start goes on. docs/embedded-store.md,
// "Damage to the journal".
import { closeSync, linkSync, copyFileSync, mkdirSync, openSync, renameSync, readFileSync, writeSync, fsyncSync } from 'node:fs'
import { join } from 'node:path'
import { logger } from '../platform/logger.ts'
import { DataFolderError } from './data-folder.ts'
import { JOURNAL_DIR, readSegments, syncDir, type BadSpan, type JournalRecord, type ReadSegment } from './journal.ts'

/** Where damaged segments are kept, as they were found, once a start accepted their loss. */
export const DAMAGED_DIR = 'journal-damaged'
/** The setting that accepts the loss (also `start --accept-journal-damage`). */
export const ACCEPT_SETTING = 'JOURNAL_ACCEPT_DAMAGE=true'

/** Unreadable bytes of one segment, and what they cost. */
export interface JournalDamage {
  file: string
  segment: number
  at: number
  end: number
  reason: string
  /** Sequence number of the last whole record before the span (0: none). */
  after: number
  /** Sequence number of the next whole record after it (null: none in the journal). */
  before: number | null
  /**
   * The record numbers the span held, as far as the numbering tells: [first, last] (first null: no
   * whole record precedes it, so where the lost ones began is not known), or null when none is missing.
   */
  lost: [number | null, number] | null
}

export interface RecoveredJournal {
  /** Every whole record, in order: what replay sends. */
  records: JournalRecord[]
  /** Spans that were a record torn by a crash mid-append (never acknowledged): left out. */
  torn: JournalDamage[]
  /** Spans that lost (or may have lost) acknowledged records. */
  damaged: JournalDamage[]
}

export class JournalDamageError extends DataFolderError {}

/**
 * Read the journal and sort its unreadable spans into torn tails and damage. `floor`: the highest
 * record number the snapshot in place holds (its largest cut), the number before the journal's
 * first record when nothing precedes a span.
 */
export function inspectJournal(dataDir: string, floor = 0): RecoveredJournal & { segments: ReadSegment[] } {
  const segs = readSegments(dataDir)
  const records: JournalRecord[] = []
  const torn: JournalDamage[] = []
  const damaged: JournalDamage[] = []
  // Every record and span in journal order, to find what lies on either side of a span.
  const items: ({ rec: JournalRecord } | { span: BadSpan; seg: ReadSegment; last: boolean })[] = []
  for (const seg of segs) {
    const spans = [...seg.bad]
    for (const rec of seg.records) {
      while (spans.length && spans[0]!.at < rec.at) items.push({ span: spans.shift()!, seg, last: false })
      items.push({ rec })
    }
    for (const span of spans) items.push({ span, seg, last: span.end === seg.size })
  }
  // The number of the next whole record after each item (null: none), found in one pass backwards.
  const nextS: (number | null)[] = new Array(items.length)
  for (let i = items.length - 1, next: number | null = null; i >= 0; i--) {
    nextS[i] = next
    const item = items[i]!
    if ('rec' in item) next = item.rec.s
  }
  let prev = floor
  let seen = false
  for (const [i, item] of items.entries()) {
    if ('rec' in item) {
      records.push({ s: item.rec.s, m: item.rec.m, ...(item.rec.up ? { up: item.rec.up } : {}), ...(item.rec.err ? { err: item.rec.err } : {}) })
      prev = item.rec.s
      seen = true
      continue
    }
    const before = nextS[i] ?? null
    const d: JournalDamage = {
      file: item.seg.file,
      segment: item.seg.n,
      at: item.span.at,
      end: item.span.end,
      reason: item.span.reason,
      after: seen ? prev : 0,
      before,
      lost: before === null ? null : seen ? (before > prev + 1 ? [prev + 1, before - 1] : null) : before > 1 ? [null, before - 1] : null,
    }
    // A span that ends its segment is a record torn by a crash mid-append when the numbering goes
    // on without a gap after it (the next run numbers from the last whole record), or when nothing
    // follows it at all. Whole records after it in its own segment, or a gap, mean damage.
    if (item.last && (before === null || before === prev + 1)) torn.push(d)
    else damaged.push(d)
  }
  return { records, torn, damaged, segments: segs }
}

const range = (d: JournalDamage) => `${d.file} bytes ${d.at}–${d.end - 1}`

function lostText(d: JournalDamage): string {
  if (d.lost) {
    const [a, b] = d.lost
    if (a === null) return `the records before record ${d.before} in this segment are lost (no whole record precedes the damage)`
    return `record${a === b ? ` ${a}` : `s ${a}–${b}`} lost (the whole record before is ${d.after || 'none'}, the next is ${d.before})`
  }
  if (d.before === null) return `whatever it held after record ${d.after || 'none'} is lost`
  return `no record number is missing around it (record ${d.after || 'none'}, then ${d.before})`
}

/** One line per damaged span: file, bytes, why, and which records. */
export function describeDamage(damaged: JournalDamage[]): string {
  return damaged.map((d) => `  - ${range(d)}: ${d.reason}; ${lostText(d)}`).join('\n')
}

/**
 * The journal's records for replay, after checking it. Torn tails are logged and left out.
 * Damage throws a JournalDamageError (nothing on disk changed) unless `accept`: then each damaged
 * segment is kept aside as found and rewritten with its whole records, and the loss is logged.
 */
export function recoverJournal(dataDir: string, opts: { accept: boolean; floor?: number }): RecoveredJournal {
  const got = inspectJournal(dataDir, opts.floor ?? 0)
  for (const t of got.torn) {
    logger.warn(
      { file: t.file, at: t.at, bytes: t.end - t.at, afterRecord: t.after },
      `the journal segment ends in bytes that are not a whole record (${t.reason}): a record cut short by a crash while it was written${t.reason.includes('CRC') ? ' (or damage to the last record: nothing after it tells which)' : ''}; it was never acknowledged and is left out`,
    )
  }
  if (!got.damaged.length) return got
  const aside = join(dataDir, DAMAGED_DIR)
  if (!opts.accept) {
    throw new JournalDamageError(
      `the write journal in ${join(dataDir, JOURNAL_DIR)} is damaged, and whole records follow the damage (acknowledged writes):\n${describeDamage(got.damaged)}\n` +
        `Start refuses, so that nothing is lost without a word. To start without the lost records, set ${ACCEPT_SETTING} (or run start --accept-journal-damage): ` +
        `every whole record is replayed, and each damaged segment is kept, as found, in ${aside}/. Or move the data folder aside, or restore it from a backup.`,
    )
  }
  mkdirSync(aside, { recursive: true })
  const stamp = new Date().toISOString().replace(/[:.]/g, '-')
  for (const seg of got.segments.filter((s) => got.damaged.some((d) => d.segment === s.n))) {
    const kept = join(aside, `${String(seg.n).padStart(8, '0')}-${stamp}.log`)
    // A second name for the file as found (nothing writes to an old segment again), then the
    // segment itself is replaced by its whole records: the next start reads it without a word,
    // and the snapshot that later deletes the segment leaves the copy aside alone.
    try {
      linkSync(seg.file, kept)
    } catch {
      copyFileSync(seg.file, kept)
    }
    syncDir(aside)
    const bytes = readFileSync(seg.file)
    const tmp = `${seg.file}.rewrite`
    const fd = openSync(tmp, 'w')
    try {
      for (const r of seg.records) {
        const frame = bytes.subarray(r.at, r.end)
        for (let at = 0; at < frame.length; ) at += writeSync(fd, frame, at)
      }
      fsyncSync(fd)
    } finally {
      closeSync(fd)
    }
    renameSync(tmp, seg.file)
    syncDir(join(dataDir, JOURNAL_DIR))
    logger.warn({ segment: seg.file, keptAs: kept }, 'a damaged journal segment was kept aside as found and rewritten with its whole records')
  }
  logger.warn(
    { damage: got.damaged.map((d) => ({ file: d.file, at: d.at, end: d.end, reason: d.reason, lost: d.lost })) },
    `the write journal was damaged and ${ACCEPT_SETTING} accepts the loss: starting without what the damage held\n${describeDamage(got.damaged)}`,
  )
  return got
}
