// The evaluation cache: every API replica keeps, in memory, the compiled flag set of the projects
// it serves and the SDK-key → project mapping (keyed by the key's hash), so evaluating reads no
// database. Changes reach every replica within 1 s two ways:
//  - Redis pub/sub: a writer publishes the project id; each replica's dedicated subscriber
//    connection drops that project (and, for key rotations, its SDK keys).
//  - A version check, the safety net for messages missed while a subscriber was reconnecting:
//    once a second each replica reads the versions of the projects it holds and drops those that
//    moved. After a subscriber reconnect everything is dropped.
// Plans (which set the rate limit) are refreshed every 10 s by the same loop.
import { LRUCache } from 'lru-cache'
import { createHash } from 'node:crypto'
import type { Db } from 'mongodb'
import { getAccount } from '../../platform/accounts.ts'
import type { Plan } from '../../platform/plans.ts'
import { sha256 } from '../../platform/ids.ts'
import { logger } from '../../platform/logger.ts'
import type { Platform } from '../../platform/platform.ts'
import { createRedis, type RedisClient } from '../../platform/redis/redis.ts'
import type { Account } from '../../platform/accounts.ts'
import { originPolicy, type OriginPolicy } from './evaluation-cors.ts'
import { definitionOf, listFlags } from '../store/flag-store.ts'
import type { ProjectDoc } from '../store/project-store.ts'
import { allowedOriginsOf, environmentNames, environmentOfKey, findProjectBySdkKeyHash, isServerKey, PRODUCTION, projects, SDK_KEY_PREFIX, SERVER_KEY_PREFIX } from '../store/project-store.ts'
import type { CompiledFlag } from '../engine/rules.ts'
import { compileFlagSet, type FlagSetSegment } from '../engine/flag-set.ts'
import { listSegments } from '../store/segment-store.ts'

export interface SdkKeyEntry {
  /** The snapshot this key evaluates: the project id for production, `<project id>/<environment>` otherwise. */
  projectId: string
  /** The project itself. */
  project: string
  environment: string
  accountId: string
  plan: Plan
  keyHash: string
  /** A server SDK key (may read the whole flag set), not a client-side one. */
  server: boolean
}

/** Client-side and server SDK keys both evaluate; anything else is not a key of ours. */
const looksLikeKey = (k: string) => (k.startsWith(SDK_KEY_PREFIX) || k.startsWith(SERVER_KEY_PREFIX)) && k.length <= 200

/** The cache key of an environment's compiled flags: the project id alone for production. */
export const snapshotId = (projectId: string, environment: string) => (environment === PRODUCTION ? projectId : `${projectId}/${environment}`)

export interface ProjectSnapshot {
  /** The project (not the snapshot id). */
  projectId: string
  environment: string
  version: number
  /**
   * The flag set's tag: a hash of this environment's flag definitions and the project's segments,
   * so it moves only when what this environment evaluates may have changed (change streams).
   */
  tag: string
  byKey: Map<string, CompiledFlag>
  /** Sorted by key (bulk evaluation order). */
  all: CompiledFlag[]
  /** The project's segments, as compiled into the flags (the flag set's answer carries them). */
  segments: FlagSetSegment[]
  /** Browser origins whose pages may read the evaluations (evaluation-cors.ts). */
  origins: OriginPolicy
}

export interface FlagCacheOptions {
  /** How often the version safety net runs. */
  pollMs?: number
  /** Plans are refreshed every this many polls. */
  planEvery?: number
  maxProjects?: number
  maxKeys?: number
}

type Message = { p: string; keys?: boolean }

/** Told when a project's snapshots are dropped (null: everything was); `keys` when its SDK keys were. */
export type InvalidationListener = (projectId: string | null, keys: boolean) => void

export class FlagCache {
  private readonly db: Db
  private readonly publisher: RedisClient
  private readonly channel: string
  private readonly subscriber: RedisClient
  private readonly snapshots: LRUCache<string, ProjectSnapshot>
  private readonly keys: LRUCache<string, SdkKeyEntry>
  /** Unknown key hashes, remembered briefly so that guessing keys does not become a database load. */
  private readonly unknownKeys = new LRUCache<string, true>({ max: 10_000, ttl: 5_000 })
  /**
   * Hashes of keys found here, by the key itself: hashing every request's key was a tenth of an
   * evaluation request's own work. Entries go with their project's keys (rotation) or all at
   * once (clear(), the cap); a hash no longer in `keys` finds nothing. SDK keys travel in every
   * evaluation request from client code; here they are held in memory, never stored.
   */
  private readonly hashOfKey = new Map<string, string>()
  private readonly loading = new Map<string, Promise<ProjectSnapshot | null>>()
  /** Snapshot ids of non-production environments held, by project, so a change drops them too. */
  private readonly environmentSnapshots = new Map<string, Set<string>>()
  private readonly generation = new Map<string, number>()
  private keyEpoch = 0
  private readonly listeners = new Set<InvalidationListener>()
  private timer: NodeJS.Timeout | null = null
  private polls = 0
  private connectedOnce = false
  private closed = false

  constructor(platform: Platform, private readonly opts: FlagCacheOptions = {}) {
    this.db = platform.db
    this.publisher = platform.redis
    this.channel = `${platform.config.QUEUE_PREFIX}:flags:changed`
    this.snapshots = new LRUCache({ max: opts.maxProjects ?? 10_000 })
    this.keys = new LRUCache({ max: opts.maxKeys ?? 100_000 })
    this.subscriber = createRedis(platform.redisUrl, 'blocking', { connectionName: 'flags-cache-subscriber' })
    this.subscriber.on('ready', () => {
      // Messages published while we were away are lost: start from the database again.
      if (this.connectedOnce) this.clear()
      this.connectedOnce = true
    })
    this.subscriber.on('message', (_channel: string, raw: string) => this.onMessage(raw))
  }

  async start(): Promise<void> {
    await this.subscriber.subscribe(this.channel)
    const every = this.opts.pollMs ?? 1_000
    this.timer = setInterval(() => {
      this.poll().catch((err) => logger.warn({ err: String(err) }, 'flags cache version check failed'))
    }, every)
    this.timer.unref()
  }

  async close(): Promise<void> {
    this.closed = true
    if (this.timer) clearInterval(this.timer)
    this.subscriber.disconnect()
  }

  /** Listen to invalidations (pub/sub, local changes, the version check); returns the unsubscribe. */
  onInvalidate(l: InvalidationListener): () => void {
    this.listeners.add(l)
    return () => void this.listeners.delete(l)
  }

  private tell(projectId: string | null, keys: boolean): void {
    for (const l of this.listeners) {
      try {
        l(projectId, keys)
      } catch (err) {
        logger.warn({ err: String(err) }, 'flags invalidation listener failed')
      }
    }
  }

  /** Loads a snapshot again from the database (a client reported a newer flag set than ours). */
  reload(projectId: string): Promise<ProjectSnapshot | null> {
    this.snapshots.delete(projectId)
    this.loading.delete(projectId)
    return this.snapshot(projectId)
  }

  /** Moves whenever keys may have been rotated away: a caller that resolved a key before a move checks it again. */
  get keyGeneration(): number {
    return this.keyEpoch
  }

  /** The entry of a key this replica already holds, without waiting; undefined: ask resolveKey. */
  knownKey(sdkKey: string): SdkKeyEntry | undefined {
    if (!looksLikeKey(sdkKey)) return undefined
    const known = this.hashOfKey.get(sdkKey)
    if (known !== undefined) return this.keys.get(known)
    const hash = sha256(sdkKey)
    const hit = this.keys.get(hash)
    if (hit) this.rememberHash(sdkKey, hash)
    return hit
  }

  private rememberHash(sdkKey: string, hash: string): void {
    if (this.hashOfKey.size >= (this.opts.maxKeys ?? 100_000)) this.hashOfKey.clear()
    this.hashOfKey.set(sdkKey, hash)
  }

  /** A project's snapshot if this replica holds it; undefined: ask snapshot(). */
  heldSnapshot(projectId: string): ProjectSnapshot | undefined {
    return this.snapshots.get(projectId)
  }

  /** The project an SDK key belongs to, or null for an unknown key. */
  async resolveKey(sdkKey: string): Promise<SdkKeyEntry | null> {
    if (!looksLikeKey(sdkKey)) return null
    const hash = sha256(sdkKey)
    const hit = this.keys.get(hash)
    if (hit) return hit
    if (this.unknownKeys.has(hash)) return null
    const epoch = this.keyEpoch
    const found = await findProjectBySdkKeyHash(this.db, hash)
    const account = found ? await getAccount(this.db, found.project.account_id) : null
    if (!found || !account) {
      this.unknownKeys.set(hash, true)
      return null
    }
    const { project, environment } = found
    const entry: SdkKeyEntry = {
      projectId: snapshotId(project._id, environment),
      project: project._id,
      environment,
      accountId: account._id,
      plan: account.plan,
      keyHash: hash,
      server: isServerKey(sdkKey),
    }
    // A rotation seen meanwhile may have retired this very key: do not remember it.
    if (epoch === this.keyEpoch) this.keys.set(hash, entry)
    return entry
  }

  /** The compiled flags of a project, loaded once and then served from memory. */
  async snapshot(projectId: string): Promise<ProjectSnapshot | null> {
    const hit = this.snapshots.get(projectId)
    if (hit) return hit
    let pending = this.loading.get(projectId)
    if (!pending) {
      const p: Promise<ProjectSnapshot | null> = this.load(projectId).finally(() => {
        if (this.loading.get(projectId) === p) this.loading.delete(projectId)
      })
      this.loading.set(projectId, (pending = p))
    }
    return pending
  }

  private async load(id: string): Promise<ProjectSnapshot | null> {
    const slash = id.indexOf('/')
    const projectId = slash < 0 ? id : id.slice(0, slash)
    const environment = slash < 0 ? PRODUCTION : id.slice(slash + 1)
    const gen = this.generation.get(projectId) ?? 0
    // Version first, flags second: a change in between leaves a snapshot older than its flags,
    // which the next version check replaces; never the other way round.
    const project = await projects(this.db).findOne({ _id: projectId })
    if (!project || !environmentNames(project).includes(environment)) return null
    const [docs, segs] = await Promise.all([listFlags(this.db, projectId), listSegments(this.db, projectId)])
    const segments: FlagSetSegment[] = segs.map((s) => ({ name: s.name, conditions: s.conditions }))
    const defs = docs.map((d) => definitionOf(d, environment))
    const { byKey, all } = compileFlagSet(defs, segments)
    const tag = createHash('sha256')
      .update(JSON.stringify([defs, segs.map((s) => [s.name, s.conditions])]))
      .digest('base64url')
      .slice(0, 22)
    const snap: ProjectSnapshot = {
      projectId,
      environment,
      version: project.version,
      tag,
      byKey,
      all,
      segments,
      origins: originPolicy(allowedOriginsOf(project)),
    }
    if ((this.generation.get(projectId) ?? 0) === gen && !this.closed) {
      this.snapshots.set(id, snap)
      if (id !== projectId) {
        let set = this.environmentSnapshots.get(projectId)
        if (!set) this.environmentSnapshots.set(projectId, (set = new Set()))
        set.add(id)
      }
    }
    return snap
  }

  /** Tell every replica (this one included, at once) that a project's flags or key changed. */
  async changed(projectId: string, opts: { keys?: boolean } = {}): Promise<void> {
    this.invalidate(projectId, opts.keys ?? false)
    const msg: Message = { p: projectId, ...(opts.keys ? { keys: true } : {}) }
    try {
      await this.publisher.publish(this.channel, JSON.stringify(msg))
    } catch (err) {
      // The change is stored; other replicas pick it up through the version check.
      logger.warn({ err: String(err), projectId }, 'flags change not published; replicas rely on the version check')
    }
  }

  private onMessage(raw: string): void {
    try {
      const m = JSON.parse(raw) as Message
      if (typeof m?.p === 'string') this.invalidate(m.p, m.keys === true)
    } catch {
      /* not ours */
    }
  }

  private invalidate(projectId: string, keys: boolean): void {
    this.generation.set(projectId, (this.generation.get(projectId) ?? 0) + 1)
    this.snapshots.delete(projectId)
    // Requests arriving from now on must not join a load that started before the change.
    this.loading.delete(projectId)
    for (const id of this.environmentSnapshots.get(projectId) ?? []) {
      this.snapshots.delete(id)
      this.loading.delete(id)
    }
    this.environmentSnapshots.delete(projectId)
    if (keys) {
      this.keyEpoch++
      const retired = new Set<string>()
      for (const [hash, e] of this.keys.entries()) if (e.project === projectId) retired.add(hash)
      for (const hash of retired) this.keys.delete(hash)
      for (const [key, hash] of this.hashOfKey) if (retired.has(hash)) this.hashOfKey.delete(key)
    }
    this.tell(projectId, keys)
  }

  private clear(): void {
    for (const snap of this.snapshots.values()) this.generation.set(snap.projectId, (this.generation.get(snap.projectId) ?? 0) + 1)
    this.snapshots.clear()
    this.environmentSnapshots.clear()
    this.keys.clear()
    this.hashOfKey.clear()
    this.keyEpoch++
    this.tell(null, true)
  }

  /** The safety net: drop snapshots whose version moved and keys that were rotated away. */
  async poll(): Promise<void> {
    this.polls++
    const ids = new Set<string>()
    for (const snap of this.snapshots.values()) ids.add(snap.projectId)
    for (const e of this.keys.values()) ids.add(e.project)
    if (ids.size === 0) return
    const list = [...ids]
    const current = new Map<string, ProjectDoc>()
    for (let i = 0; i < list.length; i += 1_000) {
      const docs = await projects(this.db).find({ _id: { $in: list.slice(i, i + 1_000) } }).toArray()
      for (const d of docs) current.set(d._id, d)
    }
    for (const snap of [...this.snapshots.values()]) {
      const p = current.get(snap.projectId)
      if (!p || p.version !== snap.version) this.invalidate(snap.projectId, false)
    }
    for (const [hash, e] of this.keys.entries()) {
      const p = current.get(e.project)
      if (!p || environmentOfKey(p, hash) !== e.environment) {
        this.keyEpoch++
        this.keys.delete(hash)
        this.tell(e.project, true)
      }
    }
    if (this.polls % (this.opts.planEvery ?? 10) === 0) await this.refreshPlans()
  }

  private async refreshPlans(): Promise<void> {
    const accountIds = [...new Set([...this.keys.values()].map((e) => e.accountId))]
    const plans = new Map<string, Plan>()
    for (let i = 0; i < accountIds.length; i += 1_000) {
      const docs = await this.db.collection<Account>('accounts').find({ _id: { $in: accountIds.slice(i, i + 1_000) } }).toArray()
      for (const d of docs) plans.set(d._id, d.plan)
    }
    for (const e of this.keys.values()) {
      const plan = plans.get(e.accountId)
      if (plan) e.plan = plan
    }
  }
}
