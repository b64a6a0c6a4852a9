// Audit history of a project's changes in MongoDB (`flag_history`). An entry is written *before*
// its change as `pending`, committed after it with the state after and the diff, and removed when
// the change fails; a pending entry whose request died is settled by the history sweep from the
// stored state (resolvePending). So a stored change always has its entry, and a refused one none.
// The collection grows with every change: it is partitioned by entry id (partitioned.ts; 32 slots
// on the embedded engine, one plain collection on MongoDB), so that even one busy project's
// entries spread over every slot, and it is kept to the plan's retention. A listing asks every
// slot for its newest entries and merges them.
import type { Db } from 'mongodb'
import type { Operation } from 'rfc6902'
import { clock } from '../../platform/clock.ts'
import { base62 } from '../../platform/ids.ts'
import type { IndexSpec } from '../../platform/store/mongo.ts'
import { partitioned, type Partitioned } from '../../platform/store/partitioned.ts'
import type { ChangeKind } from './change-state.ts'

export interface Actor {
  account_id: string
  /** The API key that made the change: an id (start of its SHA-256) and its hint, never the key. */
  api_key: { id: string; hint: string }
}

export interface HistoryDoc {
  /** Time-ordered: 9 base-36 digits of the millisecond, then 12 random characters. */
  _id: string
  project_id: string
  account_id: string
  kind: ChangeKind
  /** Flag key, segment name, environment name, webhook id or project id. */
  target: string
  /** `flag.updated`…; set when committed. */
  type?: string
  /** The environment whose state alone changed (null: shared by all environments). */
  environment?: string | null
  actor: Actor
  at: Date
  state: 'pending' | 'committed'
  before: unknown
  after?: unknown
  /** RFC 6902 JSON Patch from before to after. */
  changes?: Operation[]
  /** Changes sent to webhooks: 'pending' until the dispatch job has fanned it out. */
  dispatch?: 'pending' | 'done'
  /** Set when the sweep, not the request, committed the entry (the request died before it could). */
  settled_by_sweep?: boolean
}

export const HISTORY_COLLECTION = 'flag_history'

export const historyIndexes: IndexSpec[] = [
  {
    collection: HISTORY_COLLECTION,
    partitions: 32,
    indexes: [
      { key: { project_id: 1, _id: -1 }, name: 'project_newest' },
      { key: { project_id: 1, kind: 1, target: 1, _id: -1 }, name: 'target_newest' },
      { key: { state: 1, at: 1 }, name: 'state_at' },
      { key: { at: 1 }, name: 'at' },
    ],
  },
]

export const history = (db: Db): Partitioned<HistoryDoc> => partitioned<HistoryDoc>(db, HISTORY_COLLECTION)

export function newChangeId(ms = clock.nowMs()): string {
  return ms.toString(36).padStart(9, '0') + base62(12)
}

export async function insertPending(db: Db, doc: Omit<HistoryDoc, '_id' | 'state' | 'at'>): Promise<HistoryDoc> {
  const now = clock.now()
  const entry: HistoryDoc = { _id: newChangeId(now.getTime()), ...doc, state: 'pending', at: now }
  await history(db).of(entry._id).insertOne(entry)
  return entry
}

export async function dropPending(db: Db, e: HistoryDoc): Promise<void> {
  await history(db).of(e._id).deleteOne({ _id: e._id, state: 'pending' })
}

export async function commitEntry(db: Db, e: HistoryDoc, set: Pick<HistoryDoc, 'type' | 'environment' | 'after' | 'changes' | 'dispatch' | 'settled_by_sweep'>): Promise<boolean> {
  const clean = Object.fromEntries(Object.entries(set).filter(([, v]) => v !== undefined))
  const r = await history(db).of(e._id).updateOne({ _id: e._id, state: 'pending' }, { $set: { ...clean, state: 'committed' } })
  return r.modifiedCount === 1
}

export async function getEntry(db: Db, projectId: string, id: string): Promise<HistoryDoc | null> {
  if (id.length > 64) return null
  return history(db).of(id).findOne({ _id: id, project_id: projectId })
}

export async function markDispatched(db: Db, projectId: string, id: string): Promise<void> {
  await history(db).of(id).updateOne({ _id: id, project_id: projectId }, { $set: { dispatch: 'done' } })
}

/** Committed entries, newest first, older than `before` (the cursor). */
export async function listEntries(
  db: Db,
  projectId: string,
  opts: { limit: number; before?: string; kind?: ChangeKind; target?: string; type?: string },
): Promise<HistoryDoc[]> {
  const filter: Record<string, unknown> = { project_id: projectId, state: 'committed' }
  if (opts.kind) filter.kind = opts.kind
  if (opts.target !== undefined) filter.target = opts.target
  if (opts.type) filter.type = opts.type
  if (opts.before) filter._id = { $lt: opts.before }
  return history(db).findSorted(filter, '_id', -1, opts.limit)
}

export function entryView(e: HistoryDoc) {
  return {
    id: e._id,
    type: e.type,
    kind: e.kind,
    target: e.target,
    environment: e.environment ?? null,
    actor: e.actor,
    at: e.at.toISOString(),
    before: e.before,
    after: e.after ?? null,
    changes: e.changes ?? [],
  }
}
