// Flags in MongoDB, one document per flag, unique per (project, key). Creation takes a slot of
// the project's flag counter first (so N concurrent creates at the limit cannot overshoot) and
// gives it back when the insert fails; deletion gives it back too.
import type { Db } from 'mongodb'
import { clock } from '../../platform/clock.ts'
import { randomId } from '../../platform/ids.ts'
import { isDuplicateKey, type IndexSpec } from '../../platform/store/mongo.ts'
import { releaseFlagSlot, reserveFlagSlot } from './project-store.ts'
import type { FlagDefinition, FlagType, Rule, Split } from '../engine/rules.ts'
import type { CreateFlagBody, UpdateFlagBody } from '../flag-schema.ts'
import { PRODUCTION } from './project-store.ts'
import { variantView } from '../engine/variant-allocation.ts'

/** A flag's state in one non-production environment (production's is the document's own fields). */
export interface FlagEnvironmentState {
  name: string
  enabled: boolean
  default_value: unknown
  rules: Rule[]
  fallthrough?: Split
}

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
  /** Per-environment state besides production; absent = production only (older documents). */
  environments?: FlagEnvironmentState[]
  /** Labels to find flags by (the console's filter); absent = none. */
  tags?: string[]
  /** 1 at creation, +1 on every change (ETag / If-Match); absent on documents written before it = 0 ($inc then makes it 1). */
  version?: number
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

export const versionOf = (f: { version?: number }): number => f.version ?? 0

/** A filter matching the document only at `expected` (documents without a version are at 0). */
export function atVersion(expected: number | undefined): Record<string, unknown> {
  if (expected === undefined) return {}
  return expected === 0 ? { version: { $exists: false } } : { version: expected }
}

/**
 * The flag's state in an environment: production's is the document's own fields; another
 * environment's, until first set, is off with production's default and no rules.
 */
export function stateIn(f: FlagDoc, environment: string): Omit<FlagEnvironmentState, 'name'> {
  if (environment === PRODUCTION) return f
  const e = f.environments?.find((x) => x.name === environment)
  return e ?? { enabled: false, default_value: f.default_value, rules: [] }
}

/**
 * Variants are shown without their buckets (internal: variant-allocation.ts).
 * `type`, `fallthrough` and `tags` appear only when set, and `environment` only when one was named,
 * so a seed flag's view is as it always was but for its `version` (concurrency.ts).
 */
export function flagView(f: FlagDoc, environment?: string) {
  const st = stateIn(f, environment ?? PRODUCTION)
  return {
    key: f.key,
    name: f.name,
    ...(environment !== undefined ? { environment } : {}),
    enabled: st.enabled,
    ...(f.type !== undefined ? { type: f.type } : {}),
    default_value: st.default_value,
    rules: st.rules.map((r) => (r.variants ? { ...r, variants: r.variants.map(variantView) } : r)),
    ...(st.fallthrough ? { fallthrough: { ...st.fallthrough, variants: st.fallthrough.variants.map(variantView) } } : {}),
    ...(f.tags?.length ? { tags: f.tags } : {}),
    version: versionOf(f),
    created_at: f.created_at.toISOString(),
    updated_at: f.updated_at.toISOString(),
  }
}

export function definitionOf(f: FlagDoc, environment: string = PRODUCTION): FlagDefinition {
  const st = stateIn(f, environment)
  const def: FlagDefinition = { key: f.key, enabled: st.enabled, default_value: st.default_value, rules: st.rules }
  if (f.type !== undefined) def.type = f.type
  if (st.fallthrough) def.fallthrough = st.fallthrough
  return def
}

export type CreateResult = { ok: true; flag: FlagDoc } | { ok: false; reason: 'limit' | 'exists' }

/** Creates the flag; the body's state applies to `environment` (others start off, with its default). */
export async function createFlag(db: Db, projectId: string, body: CreateFlagBody, limit: number, environment: string = PRODUCTION): Promise<CreateResult> {
  // Cheap pre-check so that a duplicate key at the limit reports the duplicate, not the limit.
  if (await flags(db).findOne({ project_id: projectId, key: body.key })) return { ok: false, reason: 'exists' }
  if (!(await reserveFlagSlot(db, projectId, limit))) return { ok: false, reason: 'limit' }
  const now = clock.now()
  const state = {
    enabled: body.enabled,
    default_value: body.default_value,
    rules: body.rules as Rule[],
    ...(body.fallthrough ? { fallthrough: body.fallthrough as Split } : {}),
  }
  const flag: FlagDoc = {
    _id: randomId(),
    project_id: projectId,
    key: body.key,
    name: body.name ?? body.key,
    ...(body.type !== undefined ? { type: body.type } : {}),
    ...(body.tags && body.tags.length > 0 ? { tags: body.tags } : {}),
    version: 1,
    ...(environment === PRODUCTION ? state : { enabled: false, default_value: body.default_value, rules: [], environments: [{ name: environment, ...state }] }),
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

/**
 * Partial update of the flag's definition (name, tags) and of its state in `environment`. Another
 * environment's state is created on its first update, starting from its implicit state (stateIn).
 * With `expectedVersion`, only a flag still at that version is changed: null then means gone or
 * changed meanwhile (the caller reads it again to tell which).
 */
export async function updateFlag(db: Db, projectId: string, key: string, body: UpdateFlagBody, environment: string = PRODUCTION, expectedVersion?: number): Promise<FlagDoc | null> {
  const set: Record<string, unknown> = { updated_at: clock.now() }
  if (body.name !== undefined) set.name = body.name
  if (body.tags !== undefined) set.tags = body.tags
  const state: Record<string, unknown> = {}
  if (body.enabled !== undefined) state.enabled = body.enabled
  if (body.default_value !== undefined) state.default_value = body.default_value
  if (body.rules !== undefined) state.rules = body.rules as Rule[]
  if (body.fallthrough) state.fallthrough = body.fallthrough as Split
  if (environment === PRODUCTION) {
    Object.assign(set, state)
    const unset = body.fallthrough === null ? { $unset: { fallthrough: '' as const } } : {}
    return flags(db).findOneAndUpdate({ project_id: projectId, key, ...atVersion(expectedVersion) } as never, { $set: set, $inc: { version: 1 }, ...unset }, { returnDocument: 'after' })
  }
  for (let attempt = 0; attempt < 5; attempt++) {
    const current = await getFlag(db, projectId, key)
    if (!current || (expectedVersion !== undefined && versionOf(current) !== expectedVersion)) return null
    const next: FlagEnvironmentState = { name: environment, ...stateIn(current, environment), ...state } as FlagEnvironmentState
    if (body.fallthrough === null) delete next.fallthrough
    const list = [...(current.environments ?? []).filter((e) => e.name !== environment), next]
    // The list is replaced whole, guarded by the list it was computed from (compare-and-set, retried on a race).
    const guard = current.environments ? { environments: current.environments } : { environments: { $exists: false } }
    const r = await flags(db).findOneAndUpdate({ project_id: projectId, key, ...guard, ...atVersion(expectedVersion) } as never, { $set: { ...set, environments: list }, $inc: { version: 1 } }, { returnDocument: 'after' })
    if (r) return r
  }
  throw new Error('flag environment update kept racing')
}

/**
 * Sets the flag's name, tags and its state in each of `states`' environments at once (a revert),
 * only if it is still at `expectedVersion`; other environments' states are kept. Null: gone or
 * changed meanwhile.
 */
export async function replaceFlagState(
  db: Db,
  current: FlagDoc,
  change: { name: string; tags: string[]; states: FlagEnvironmentState[] },
  expectedVersion: number,
): Promise<FlagDoc | null> {
  const set: Record<string, unknown> = { name: change.name, tags: change.tags, updated_at: clock.now() }
  const unset: Record<string, ''> = {}
  const environments = [...(current.environments ?? [])]
  for (const st of change.states) {
    if (st.name === PRODUCTION) {
      Object.assign(set, { enabled: st.enabled, default_value: st.default_value, rules: st.rules })
      if (st.fallthrough) set.fallthrough = st.fallthrough
      else unset.fallthrough = ''
      continue
    }
    const i = environments.findIndex((e) => e.name === st.name)
    if (i >= 0) environments[i] = st
    else environments.push(st)
  }
  if (environments.length > 0 || current.environments) set.environments = environments
  return flags(db).findOneAndUpdate(
    { _id: current._id, ...atVersion(expectedVersion) } as never,
    { $set: set, $inc: { version: 1 }, ...(Object.keys(unset).length ? { $unset: unset } : {}) },
    { returnDocument: 'after' },
  )
}

/** With `expectedVersion`, only a flag still at that version is deleted. */
export async function deleteFlag(db: Db, projectId: string, key: string, expectedVersion?: number): Promise<boolean> {
  const r = await flags(db).deleteOne({ project_id: projectId, key, ...atVersion(expectedVersion) } as never)
  if (r.deletedCount !== 1) return false
  await releaseFlagSlot(db, projectId)
  return true
}

/** Keys of the project's flags whose rules reference the segment (sorted). */
export async function flagsUsingSegment(db: Db, projectId: string, segment: string): Promise<string[]> {
  const docs = await flags(db)
    .find({ project_id: projectId, $or: [{ 'rules.segments': segment }, { 'environments.rules.segments': segment }] }, { projection: { key: 1 } })
    .sort({ key: 1 })
    .toArray()
  return docs.map((d) => d.key)
}

/** Every segment name the rules reference, each once. */
export function segmentsOf(rules: { segments?: string[] }[] | undefined): string[] {
  return [...new Set((rules ?? []).flatMap((r) => r.segments ?? []))]
}
