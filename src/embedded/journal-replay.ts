// Replaying the write journal (journal.ts) over a restored snapshot, at start, before anything
// else connects: each acknowledged write the snapshot does not hold is sent again, in the order
// the engine acknowledged them, as the command the client sent — with the _id an upsert got then
// and without the statements that failed then, so that it does exactly what it did.
import type { Db, Document } from 'mongodb'
import { logger } from '../platform/logger.ts'
import type { JournalRecord } from './journal.ts'
import { commandOf } from './wire.ts'

/** Per-connection and driver fields of a sent command that mean nothing on replay. */
const SESSION_FIELDS = ['$db', 'lsid', 'txnNumber', '$clusterTime', '$readPreference', 'apiVersion', 'apiStrict', 'apiDeprecationErrors', 'writeConcern', 'maxTimeMS']

const STATEMENTS: Record<string, string> = { insert: 'documents', update: 'updates', delete: 'deletes' }

/** The command a record replays, or null when none of its statements had written. */
export function replayCommand(rec: JournalRecord): { db: string; coll: string; cmd: Document } | null {
  const cmd = commandOf(rec.m, { promoteValues: false, promoteLongs: false, promoteBuffers: false })
  const db = String(cmd.$db)
  for (const f of SESSION_FIELDS) delete cmd[f]
  const name = Object.keys(cmd)[0]!
  const coll = String(cmd[name])
  for (const [i, id] of rec.up ?? []) {
    if (name === 'findAndModify') cmd.update = withId(cmd.update, id)
    else if (cmd.updates?.[i]) cmd.updates[i].u = withId(cmd.updates[i].u, id)
  }
  const field = STATEMENTS[name]
  if (field && rec.err?.length) {
    const failed = new Set(rec.err)
    const ordered = cmd.ordered !== false && String(cmd.ordered) !== 'false'
    // Ordered: the engine stopped at the first failure. Unordered: it went on past each.
    const first = Math.min(...rec.err)
    cmd[field] = (cmd[field] as Document[]).filter((_, i) => (ordered ? i < first : !failed.has(i)))
    if (!cmd[field].length) return null
  }
  return { db, coll, cmd }
}

/** An update that inserts the _id the engine chose the first time (a fresh one would differ). */
function withId(u: unknown, id: unknown): unknown {
  if (Array.isArray(u) || !u || typeof u !== 'object') return u // pipeline updates: left as sent
  const doc = u as Document
  if (Object.keys(doc).some((k) => k.startsWith('$'))) return { ...doc, $setOnInsert: { ...(doc.$setOnInsert ?? {}), _id: id } }
  return { ...doc, _id: id }
}

export interface ReplayResult {
  applied: number
  skipped: number
  /** Replayed writes the engine answered differently than the first time (a write error). */
  differed: number
  lastSeq: number
  /** Collections a replayed write changed (a snapshot must read them again). */
  touched: Set<string>
}

/**
 * Replay the records the snapshot does not hold. With `cuts` (from the snapshot), a record of a
 * collection counts only past its collection's cut, and collections the snapshot does not save are
 * not replayed (they are not kept); without a snapshot, every record counts.
 */
export async function replayJournal(db: Db, records: JournalRecord[], cuts: Record<string, number> | null): Promise<ReplayResult> {
  const result: ReplayResult = { applied: 0, skipped: 0, differed: 0, lastSeq: Math.max(0, ...Object.values(cuts ?? {})), touched: new Set() }
  for (const rec of records) {
    result.lastSeq = Math.max(result.lastSeq, rec.s)
    const what = replayCommand(rec)
    if (!what) {
      result.skipped++
      continue
    }
    if (cuts && !(what.coll in cuts && rec.s > cuts[what.coll]!)) {
      result.skipped++
      continue
    }
    // A kept store holds one database: `db` (the record's own $db names the same one).
    let reply
    try {
      reply = await db.command(what.cmd)
    } catch (err) {
      throw new Error(`replaying journal record ${rec.s} (${Object.keys(what.cmd)[0]} on ${what.coll}) failed: ${(err as Error).message}`)
    }
    if (Array.isArray(reply.writeErrors) && reply.writeErrors.length) {
      result.differed++
      if (result.differed <= 5) logger.warn({ seq: rec.s, coll: what.coll, errors: reply.writeErrors.slice(0, 3) }, 'a journaled write did not replay as it ran')
    }
    result.applied++
    result.touched.add(what.coll)
  }
  return result
}
