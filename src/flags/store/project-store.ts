// Projects in MongoDB. Each has its own SDK key (stored only as a SHA-256 hash), a flag counter
// that makes the per-project plan limit atomic, and a version bumped after every change of its
// flags or key, which the evaluation cache compares against. The per-account project limit is a
// counter document per account, reserved with a conditional $inc before the insert. Apart from
// that cache version, `settings_version` counts changes of the settings PATCH/PUT writes (name,
// allowed_origins): it is the project's ETag (concurrency.ts), so a flag toggled or a key rotated
// does not turn someone's rename into a conflict.
import type { Db } from 'mongodb'
import { clock } from '../../platform/clock.ts'
import { newApiKey, randomId, sha256 } from '../../platform/ids.ts'
import { isDuplicateKey, type IndexSpec } from '../../platform/store/mongo.ts'

export const SDK_KEY_PREFIX = 'fbsdk_'
/**
 * Server SDK keys: kept by back ends, never shipped to browsers, so they alone may read an
 * environment's whole flag set (rules can hold e-mail addresses and other targeting data). They
 * also open everything a client-side key opens (OFREP, /evaluate, the change stream).
 */
export const SERVER_KEY_PREFIX = 'fbsrv_'

/** Whether a raw key is a server SDK key (by its prefix). */
export const isServerKey = (key: string) => key.startsWith(SERVER_KEY_PREFIX)

export interface ProjectDoc {
  _id: string
  account_id: string
  name: string
  sdk_key_hash: string
  /** First characters of the key, so a user can tell keys apart without the key being stored. */
  sdk_key_hint: string
  flag_count: number
  /** Segments held (plan limit, segment-store.ts); absent on documents written before segments. */
  segment_count?: number
  /** Flag-change webhooks held (plan limit, change-hook-store.ts); absent on documents written before them. */
  webhook_count?: number
  version: number
  /** The version of name and allowed_origins (1 at creation, +1 per PATCH/PUT): the ETag; absent = 0 (documents before it). */
  settings_version?: number
  created_at: Date
  sdk_key_rotated_at?: Date
  /** Production's server SDK key (hash and hint); absent until one is made. */
  server_key_hash?: string
  server_key_hint?: string
  /**
   * Environments besides production, each with its own SDK key (hash). Production is the project's
   * own key (`sdk_key_hash`); absent = production only (documents written before environments).
   */
  environments?: EnvironmentDoc[]
  /** Browser origins whose pages may read evaluations (CORS); absent = ANY_ORIGIN (documents before the field). */
  allowed_origins?: string[]
}

export const PRODUCTION = 'production'

export interface EnvironmentDoc {
  name: string
  sdk_key_hash: string
  sdk_key_hint: string
  /** The environment's server SDK key; kept here so a rename or delete carries it along. */
  server_key_hash?: string
  server_key_hint?: string
  created_at: Date
}

/** The project's environment names, production first. */
export const environmentNames = (p: ProjectDoc): string[] => [PRODUCTION, ...(p.environments ?? []).map((e) => e.name)]

/** The environment an SDK key hash (client-side or server) belongs to in this project, or null. */
export function environmentOfKey(p: ProjectDoc, hash: string): string | null {
  if (p.sdk_key_hash === hash || p.server_key_hash === hash) return PRODUCTION
  return p.environments?.find((e) => e.sdk_key_hash === hash || e.server_key_hash === hash)?.name ?? null
}

/** Evaluation is open to every origin by default: SDK keys are made to live in browser pages. */
export const ANY_ORIGIN = ['*']

export const allowedOriginsOf = (p: ProjectDoc): string[] => p.allowed_origins ?? ANY_ORIGIN

interface ProjectCounterDoc {
  _id: string
  projects: number
}

export const projectIndexes: IndexSpec[] = [
  {
    collection: 'flag_projects',
    indexes: [
      { key: { sdk_key_hash: 1 }, name: 'sdk_key_hash', unique: true },
      { key: { account_id: 1, created_at: 1 }, name: 'account_created' },
      { key: { 'environments.sdk_key_hash': 1 }, name: 'environment_sdk_key_hash' },
      { key: { server_key_hash: 1 }, name: 'server_key_hash' },
      { key: { 'environments.server_key_hash': 1 }, name: 'environment_server_key_hash' },
    ],
  },
]

export const projects = (db: Db) => db.collection<ProjectDoc>('flag_projects')
const counters = (db: Db) => db.collection<ProjectCounterDoc>('flag_project_counters')

const hintOf = (key: string) => `${key.slice(0, SDK_KEY_PREFIX.length + 4)}…`

/** The server key's hint of an environment, or null when it has none yet. */
export function serverKeyHint(p: ProjectDoc, environment: string): string | null {
  if (environment === PRODUCTION) return p.server_key_hint ?? null
  return p.environments?.find((e) => e.name === environment)?.server_key_hint ?? null
}

/** The version of the project's settings (name, allowed_origins), as ETag and the view's `version`. */
export const settingsVersionOf = (p: { settings_version?: number }): number => p.settings_version ?? 0

export function projectView(p: ProjectDoc) {
  return {
    id: p._id,
    name: p.name,
    sdk_key_hint: p.sdk_key_hint,
    flag_count: p.flag_count,
    allowed_origins: allowedOriginsOf(p),
    version: settingsVersionOf(p),
    created_at: p.created_at.toISOString(),
  }
}

async function reserveProjectSlot(db: Db, accountId: string, limit: number): Promise<boolean> {
  try {
    await counters(db).updateOne({ _id: accountId }, { $setOnInsert: { projects: 0 } }, { upsert: true })
  } catch (err) {
    if (!isDuplicateKey(err)) throw err // a concurrent upsert created it
  }
  const r = await counters(db).updateOne({ _id: accountId, projects: { $lt: limit } }, { $inc: { projects: 1 } })
  return r.modifiedCount === 1
}

async function releaseProjectSlot(db: Db, accountId: string): Promise<void> {
  await counters(db).updateOne({ _id: accountId, projects: { $gt: 0 } }, { $inc: { projects: -1 } })
}

/**
 * Deletes the account's project document (its SDK and server keys stop resolving at once) and
 * gives its slot back; false if there is no such project. Its flags, segments and the rest are
 * removed by the caller after this (project-delete.ts): until then they belong to no project.
 */
export async function deleteProjectDoc(db: Db, accountId: string, id: string): Promise<boolean> {
  if (id.length > 64) return false
  const r = await projects(db).deleteOne({ _id: id, account_id: accountId })
  if (r.deletedCount !== 1) return false
  await releaseProjectSlot(db, accountId)
  return true
}

/** Create a project if the account is under `limit`; null when the limit is reached. */
export async function createProject(
  db: Db,
  accountId: string,
  name: string,
  limit: number,
  allowedOrigins: string[] = ANY_ORIGIN,
): Promise<{ project: ProjectDoc; sdkKey: string } | null> {
  if (!(await reserveProjectSlot(db, accountId, limit))) return null
  const sdkKey = newApiKey(SDK_KEY_PREFIX)
  const project: ProjectDoc = {
    _id: randomId(),
    account_id: accountId,
    name,
    sdk_key_hash: sha256(sdkKey),
    sdk_key_hint: hintOf(sdkKey),
    flag_count: 0,
    version: 0,
    settings_version: 1,
    created_at: clock.now(),
    allowed_origins: allowedOrigins,
  }
  try {
    await projects(db).insertOne(project)
  } catch (err) {
    await releaseProjectSlot(db, accountId)
    throw err
  }
  return { project, sdkKey }
}

export async function listProjects(db: Db, accountId: string): Promise<ProjectDoc[]> {
  return projects(db).find({ account_id: accountId }).sort({ created_at: 1, _id: 1 }).toArray()
}

/** The account's project, or null (also for another account's project: callers answer 404). */
export async function getProject(db: Db, accountId: string, id: string): Promise<ProjectDoc | null> {
  if (id.length > 64) return null
  return projects(db).findOne({ _id: id, account_id: accountId })
}

/** The project and environment an SDK key (by hash) belongs to: production's key or an environment's. */
export async function findProjectBySdkKeyHash(db: Db, hash: string): Promise<{ project: ProjectDoc; environment: string } | null> {
  const p = await projects(db).findOne({
    $or: [{ sdk_key_hash: hash }, { 'environments.sdk_key_hash': hash }, { server_key_hash: hash }, { 'environments.server_key_hash': hash }],
  })
  const environment = p && environmentOfKey(p, hash)
  return p && environment ? { project: p, environment } : null
}

/**
 * Add an environment with a fresh SDK key if the project has fewer than `limit` (production
 * counted); 'exists' / 'limit' otherwise. The list is replaced whole, guarded by the list it was
 * computed from (compare-and-set, retried on a race), so concurrent adds cannot overshoot.
 */
export async function addEnvironment(
  db: Db,
  accountId: string,
  id: string,
  name: string,
  limit: number,
): Promise<{ ok: true; sdkKey: string; project: ProjectDoc } | { ok: false; reason: 'exists' | 'limit' | 'not_found' }> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const p = await getProject(db, accountId, id)
    if (!p) return { ok: false, reason: 'not_found' }
    const names = environmentNames(p)
    if (names.includes(name)) return { ok: false, reason: 'exists' }
    if (names.length >= limit) return { ok: false, reason: 'limit' }
    const sdkKey = newApiKey(SDK_KEY_PREFIX)
    const env: EnvironmentDoc = { name, sdk_key_hash: sha256(sdkKey), sdk_key_hint: hintOf(sdkKey), created_at: clock.now() }
    const updated = await replaceEnvironments(db, p, [...(p.environments ?? []), env])
    if (updated) return { ok: true, sdkKey, project: updated }
  }
  throw new Error('environment creation kept racing')
}

/** The project's environment list replaced whole, guarded by the list it was computed from; null when it changed meanwhile. */
export async function replaceEnvironments(db: Db, p: ProjectDoc, list: EnvironmentDoc[]): Promise<ProjectDoc | null> {
  const guard = p.environments ? { environments: p.environments } : { environments: { $exists: false } }
  return projects(db).findOneAndUpdate({ _id: p._id, ...guard } as never, { $set: { environments: list }, $inc: { version: 1 } }, { returnDocument: 'after' })
}

/**
 * Removes the environment's server SDK key (production included): it stops working on every
 * replica within about 1 s. Null if there is no such project or environment; a project without
 * one is answered as it is (nothing to remove).
 */
export async function revokeServerKey(db: Db, accountId: string, id: string, name: string): Promise<ProjectDoc | null> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const p = await getProject(db, accountId, id)
    if (!p || !environmentNames(p).includes(name)) return null
    if (serverKeyHint(p, name) === null) return p
    if (name === PRODUCTION) {
      const project = await projects(db).findOneAndUpdate({ _id: p._id }, { $unset: { server_key_hash: '', server_key_hint: '' }, $inc: { version: 1 } }, { returnDocument: 'after' })
      if (project) return project
      return null
    }
    const list = p.environments!.map((e) => {
      if (e.name !== name) return e
      const { server_key_hash: _h, server_key_hint: _hint, ...rest } = e
      return rest
    })
    const project = await replaceEnvironments(db, p, list)
    if (project) return project
  }
  throw new Error('server key revocation kept racing')
}

/** A new SDK key for a non-production environment (production: rotateSdkKey); null if there is no such environment. */
export async function rotateEnvironmentKey(db: Db, accountId: string, id: string, name: string): Promise<{ project: ProjectDoc; sdkKey: string } | null> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const p = await getProject(db, accountId, id)
    if (!p?.environments?.some((e) => e.name === name)) return null
    const sdkKey = newApiKey(SDK_KEY_PREFIX)
    const list = p.environments.map((e) => (e.name === name ? { ...e, sdk_key_hash: sha256(sdkKey), sdk_key_hint: hintOf(sdkKey) } : e))
    const project = await replaceEnvironments(db, p, list)
    if (project) return { project, sdkKey }
  }
  throw new Error('environment key rotation kept racing')
}

/**
 * A new server SDK key for an environment (production included): made on first call, replaced
 * after (the old one stops working once the change is published). Null: no such project or
 * environment.
 */
export async function rotateServerKey(db: Db, accountId: string, id: string, name: string): Promise<{ project: ProjectDoc; serverKey: string } | null> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const p = await getProject(db, accountId, id)
    if (!p || !environmentNames(p).includes(name)) return null
    const serverKey = newApiKey(SERVER_KEY_PREFIX)
    const set = { server_key_hash: sha256(serverKey), server_key_hint: hintOf(serverKey) }
    if (name === PRODUCTION) {
      const project = await projects(db).findOneAndUpdate({ _id: p._id }, { $set: set, $inc: { version: 1 } }, { returnDocument: 'after' })
      if (project) return { project, serverKey }
      return null
    }
    const project = await replaceEnvironments(db, p, p.environments!.map((e) => (e.name === name ? { ...e, ...set } : e)))
    if (project) return { project, serverKey }
  }
  throw new Error('server key rotation kept racing')
}

/** Replace the SDK key; the old one stops working everywhere once the change is published. */
export async function rotateSdkKey(db: Db, accountId: string, id: string): Promise<{ project: ProjectDoc; sdkKey: string } | null> {
  const sdkKey = newApiKey(SDK_KEY_PREFIX)
  const project = await projects(db).findOneAndUpdate(
    { _id: id, account_id: accountId },
    { $set: { sdk_key_hash: sha256(sdkKey), sdk_key_hint: hintOf(sdkKey), sdk_key_rotated_at: clock.now() }, $inc: { version: 1 } },
    { returnDocument: 'after' },
  )
  return project ? { project, sdkKey } : null
}

/**
 * Change a project's own settings. The version moves with them, so every replica's evaluation
 * cache reloads the project (its allowed origins are part of the snapshot), and so does the
 * settings version. With `expectedSettings`, only a project whose settings are still at that
 * version is changed. Null: not the account's, or (with `expectedSettings`) changed meanwhile.
 */
export async function updateProject(
  db: Db,
  accountId: string,
  id: string,
  change: { name?: string; allowed_origins?: string[] },
  expectedSettings?: number,
): Promise<ProjectDoc | null> {
  if (id.length > 64) return null
  const set: Partial<ProjectDoc> = {}
  if (change.name !== undefined) set.name = change.name
  if (change.allowed_origins !== undefined) set.allowed_origins = change.allowed_origins
  // Documents written before settings versions are at 0: the filter matches them by the field's absence.
  const guard = expectedSettings === undefined ? {} : expectedSettings === 0 ? { settings_version: { $exists: false } } : { settings_version: expectedSettings }
  return projects(db).findOneAndUpdate({ _id: id, account_id: accountId, ...guard } as never, { $set: set, $inc: { version: 1, settings_version: 1 } }, { returnDocument: 'after' })
}

/** Take one flag slot if the project has fewer than `limit` flags. */
export async function reserveFlagSlot(db: Db, projectId: string, limit: number): Promise<boolean> {
  const r = await projects(db).updateOne({ _id: projectId, flag_count: { $lt: limit } }, { $inc: { flag_count: 1 } })
  return r.modifiedCount === 1
}

export async function releaseFlagSlot(db: Db, projectId: string): Promise<void> {
  await projects(db).updateOne({ _id: projectId, flag_count: { $gt: 0 } }, { $inc: { flag_count: -1 } })
}

/** Record that the project's flags changed; returns the new version. */
export async function bumpVersion(db: Db, projectId: string): Promise<number> {
  const p = await projects(db).findOneAndUpdate({ _id: projectId }, { $inc: { version: 1 } }, { returnDocument: 'after' })
  return p?.version ?? 0
}
