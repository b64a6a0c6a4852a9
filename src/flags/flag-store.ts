// Flags in MongoDB, one document per flag, unique per (project, key). Creation takes a slot of
// the project's flag counter first (so N concurrent creates at the limit cannot overshoot) and
// gives it back when the insert fails; deletion gives it back too.
import type { Db } from 'mongodb'
import { clock } from '../platform/clock.ts'
import { randomId } from '../platform/ids.ts'
import { isDuplicateKey, type IndexSpec } from '../platform/mongo.ts'
import { releaseFlagSlot, reserveFlagSlot } from './project-store.ts'
import type { FlagDefinition, FlagType, Rule, Split } from './rules.ts'
import type { CreateFlagBody, UpdateFlagBody } from './schema.ts'

export interface FlagDoc {
  _id: string
  project_id: string
  key: string
  name: string
  enabled: boolean
  /** Absent on the seed's untyped flags (and on every document written before types existed). */
  type?: FlagType
  default_value: unknown
  rules: Rule[]
  fallthrough?: Split
  created_at: Date
  updated_at: Date
}

export const flagIndexes: IndexSpec[] = [
  {
    collection: 'flags',
    indexes: [{ key: { project_id: 1, key: 1 }, name: 'project_key', unique: true }],
  },
]

export const flags = (db: Db) => db.collection<FlagDoc>('flags')

/** `type` and `fallthrough` appear only when set, so a seed flag's view is as it always was. */
export function flagView(f: FlagDoc) {
  return {
    key: f.key,
    name: f.name,
    enabled: f.enabled,
    ...(f.type !== undefined ? { type: f.type } : {}),
    default_value: f.default_value,
    rules: f.rules,
    ...(f.fallthrough ? { fallthrough: f.fallthrough } : {}),
    created_at: f.created_at.toISOString(),
    updated_at: f.updated_at.toISOString(),
  }
}

export function definitionOf(f: FlagDoc): FlagDefinition {
  const def: FlagDefinition = { key: f.key, enabled: f.enabled, default_value: f.default_value, rules: f.rules }
  if (f.type !== undefined) def.type = f.type
  if (f.fallthrough) def.fallthrough = f.fallthrough
  return def
}

export type CreateResult = { ok: true; flag: FlagDoc } | { ok: false; reason: 'limit' | 'exists' }

export async function createFlag(db: Db, projectId: string, body: CreateFlagBody, limit: number): Promise<CreateResult> {
  // Cheap pre-check so that a duplicate key at the limit reports the duplicate, not the limit.
  if (await flags(db).findOne({ project_id: projectId, key: body.key })) return { ok: false, reason: 'exists' }
  if (!(await reserveFlagSlot(db, projectId, limit))) return { ok: false, reason: 'limit' }
  const now = clock.now()
  const flag: FlagDoc = {
    _id: randomId(),
    project_id: projectId,
    key: body.key,
    name: body.name ?? body.key,
    enabled: body.enabled,
    ...(body.type !== undefined ? { type: body.type } : {}),
    default_value: body.default_value,
    rules: body.rules as Rule[],
    ...(body.fallthrough ? { fallthrough: body.fallthrough as Split } : {}),
    created_at: now,
    updated_at: now,
  }
  try {
    await flags(db).insertOne(flag)
  } catch (err) {
    await releaseFlagSlot(db, projectId)
    if (isDuplicateKey(err)) return { ok: false, reason: 'exists' }
    throw err
  }
  return { ok: true, flag }
}

export async function listFlags(db: Db, projectId: string): Promise<FlagDoc[]> {
  return flags(db).find({ project_id: projectId }).sort({ key: 1 }).toArray()
}

export async function getFlag(db: Db, projectId: string, key: string): Promise<FlagDoc | null> {
  return flags(db).findOne({ project_id: projectId, key })
}

export async function updateFlag(db: Db, projectId: string, key: string, body: UpdateFlagBody): Promise<FlagDoc | null> {
  const set: Partial<FlagDoc> = { updated_at: clock.now() }
  if (body.name !== undefined) set.name = body.name
  if (body.enabled !== undefined) set.enabled = body.enabled
  if (body.default_value !== undefined) set.default_value = body.default_value
  if (body.rules !== undefined) set.rules = body.rules as Rule[]
  if (body.fallthrough) set.fallthrough = body.fallthrough as Split
  const unset = body.fallthrough === null ? { $unset: { fallthrough: '' as const } } : {}
  return flags(db).findOneAndUpdate({ project_id: projectId, key }, { $set: set, ...unset }, { returnDocument: 'after' })
}

export async function deleteFlag(db: Db, projectId: string, key: string): Promise<boolean> {
  const r = await flags(db).deleteOne({ project_id: projectId, key })
  if (r.deletedCount !== 1) return false
  await releaseFlagSlot(db, projectId)
  return true
}

/** Keys of the project's flags whose rules reference the segment (sorted). */
export async function flagsUsingSegment(db: Db, projectId: string, segment: string): Promise<string[]> {
  const docs = await flags(db).find({ project_id: projectId, 'rules.segments': segment }, { projection: { key: 1 } }).sort({ key: 1 }).toArray()
  return docs.map((d) => d.key)
}

/** Every segment name the rules reference, each once. */
export function segmentsOf(rules: { segments?: string[] }[] | undefined): string[] {
  return [...new Set((rules ?? []).flatMap((r) => r.segments ?? []))]
}
