// Segments in MongoDB: named, reusable condition sets of a project, referenced from flag rules by
// name (`segments: ["beta-testers"]`). Every segment write goes through this file (and bumps the
// project's version through the caller, like flag writes), so later hooks have one place to attach.
// The per-project plan limit is a conditional counter on the project, as for flags.
import type { Db } from 'mongodb'
import { clock } from '../../platform/clock.ts'
import { randomId } from '../../platform/ids.ts'
import { isDuplicateKey, type IndexSpec } from '../../platform/store/mongo.ts'
import type { Condition } from '../engine/operators.ts'
import { projects } from './project-store.ts'
import { atVersion, versionOf } from './flag-store.ts'

export interface SegmentDoc {
  _id: string
  project_id: string
  name: string
  description: string
  conditions: Condition[]
  /** 1 at creation, +1 on every change (ETag / If-Match); absent on older documents = 0. */
  version?: number
  created_at: Date
  updated_at: Date
}

export const segmentIndexes: IndexSpec[] = [
  { collection: 'flag_segments', indexes: [{ key: { project_id: 1, name: 1 }, name: 'project_name', unique: true }] },
]

export const segments = (db: Db) => db.collection<SegmentDoc>('flag_segments')

export function segmentView(s: SegmentDoc) {
  return {
    name: s.name,
    description: s.description,
    conditions: s.conditions,
    version: versionOf(s),
    created_at: s.created_at.toISOString(),
    updated_at: s.updated_at.toISOString(),
  }
}

export async function listSegments(db: Db, projectId: string): Promise<SegmentDoc[]> {
  return segments(db).find({ project_id: projectId }).sort({ name: 1 }).toArray()
}

export async function getSegment(db: Db, projectId: string, name: string): Promise<SegmentDoc | null> {
  return segments(db).findOne({ project_id: projectId, name })
}

/** The names among `names` that are not segments of the project. */
export async function missingSegments(db: Db, projectId: string, names: string[]): Promise<string[]> {
  if (names.length === 0) return []
  const found = await segments(db).find({ project_id: projectId, name: { $in: names } }, { projection: { name: 1 } }).toArray()
  const have = new Set(found.map((s) => s.name))
  return names.filter((n) => !have.has(n))
}

export type CreateSegmentResult = { ok: true; segment: SegmentDoc } | { ok: false; reason: 'limit' | 'exists' }

export async function createSegment(
  db: Db,
  projectId: string,
  body: { name: string; description?: string; conditions: Condition[] },
  limit: number,
): Promise<CreateSegmentResult> {
  if (await getSegment(db, projectId, body.name)) return { ok: false, reason: 'exists' }
  // Documents written before segments have no counter: $lt treats a missing field as not less, so it is set first.
  await projects(db).updateOne({ _id: projectId, segment_count: { $exists: false } }, { $set: { segment_count: 0 } })
  const slot = await projects(db).updateOne({ _id: projectId, segment_count: { $lt: limit } }, { $inc: { segment_count: 1 } })
  if (slot.modifiedCount !== 1) return { ok: false, reason: 'limit' }
  const now = clock.now()
  const segment: SegmentDoc = {
    _id: randomId(),
    project_id: projectId,
    name: body.name,
    description: body.description ?? '',
    conditions: body.conditions,
    version: 1,
    created_at: now,
    updated_at: now,
  }
  try {
    await segments(db).insertOne(segment)
  } catch (err) {
    await releaseSegmentSlot(db, projectId)
    if (isDuplicateKey(err)) return { ok: false, reason: 'exists' }
    throw err
  }
  return { ok: true, segment }
}

async function releaseSegmentSlot(db: Db, projectId: string): Promise<void> {
  await projects(db).updateOne({ _id: projectId, segment_count: { $gt: 0 } }, { $inc: { segment_count: -1 } })
}

export async function updateSegment(
  db: Db,
  projectId: string,
  name: string,
  change: { description?: string; conditions?: Condition[] },
  /** Only a segment still at this version is changed (null: gone or changed meanwhile). */
  expectedVersion?: number,
): Promise<SegmentDoc | null> {
  const set: Partial<SegmentDoc> = { updated_at: clock.now() }
  if (change.description !== undefined) set.description = change.description
  if (change.conditions !== undefined) set.conditions = change.conditions
  return segments(db).findOneAndUpdate({ project_id: projectId, name, ...atVersion(expectedVersion) } as never, { $set: set, $inc: { version: 1 } }, { returnDocument: 'after' })
}

export async function deleteSegment(db: Db, projectId: string, name: string, expectedVersion?: number): Promise<boolean> {
  const r = await segments(db).deleteOne({ project_id: projectId, name, ...atVersion(expectedVersion) } as never)
  if (r.deletedCount !== 1) return false
  await releaseSegmentSlot(db, projectId)
  return true
}
