// The change streams open on one API replica, grouped by flag set (project + environment). The
// flag cache already hears of every change on every replica (pub/sub, with the version check as
// safety net); on each invalidation the hub reloads the affected flag sets once per replica and
// compares their tags, so a stream is told only when what its environment evaluates moved (a
// change in `staging` leaves `production`'s streams quiet). The state is the tag, not a log: a
// stream that resumes compares its Last-Event-ID with the current tag (stream-routes.ts).
import { logger } from '../../platform/logger.ts'
import type { FlagCache, SdkKeyEntry } from './flag-cache.ts'

export interface StreamListener {
  /** The raw SDK key the stream opened with (checked again when the project's keys change). */
  sdkKey: string
  /** The flag set's tag moved. */
  onTag(tag: string): void
  /** The key was rotated away or its environment removed: the stream must end. */
  onRevoked(): void
}

interface Group {
  id: string
  project: string
  listeners: Set<StreamListener>
  tag: string | null
  running: Promise<void> | null
  again: boolean
}

/** The tag of a flag set that no longer exists (environment removed). */
const GONE = 'gone'

export class ChangeHub {
  private readonly groups = new Map<string, Group>()
  private readonly byProject = new Map<string, Set<Group>>()
  private readonly unlisten: () => void
  private readonly timer: NodeJS.Timeout

  constructor(
    private readonly cache: FlagCache,
    opts: { checkMs?: number } = {},
  ) {
    this.unlisten = cache.onInvalidate((projectId, keys) => this.invalidated(projectId, keys))
    // The cache's version check covers only the flag sets it holds: keep ours held (an LRU eviction
    // or an invalidation nobody re-read would otherwise leave a group unwatched).
    this.timer = setInterval(() => {
      for (const g of this.groups.values()) {
        if (this.cache.heldSnapshot(g.id)) continue
        this.refresh(g).catch((err) => logger.warn({ err: String(err), snapshot: g.id }, 'change stream refresh failed'))
      }
    }, opts.checkMs ?? 1_000)
    this.timer.unref()
  }

  /** Adds a stream to its flag set's group; resolves with the flag set's current tag. */
  async join(entry: SdkKeyEntry, listener: StreamListener): Promise<{ tag: string; leave: () => void }> {
    let g = this.groups.get(entry.projectId)
    if (!g) {
      g = { id: entry.projectId, project: entry.project, listeners: new Set(), tag: null, running: null, again: false }
      this.groups.set(g.id, g)
      let set = this.byProject.get(g.project)
      if (!set) this.byProject.set(g.project, (set = new Set()))
      set.add(g)
    }
    g.listeners.add(listener)
    const group = g
    const leave = () => {
      if (!group.listeners.delete(listener) || group.listeners.size > 0) return
      this.groups.delete(group.id)
      const set = this.byProject.get(group.project)
      set?.delete(group)
      if (set?.size === 0) this.byProject.delete(group.project)
    }
    try {
      if (group.tag === null || !this.cache.heldSnapshot(group.id)) await this.refresh(group)
    } catch (err) {
      leave()
      throw err
    }
    return { tag: group.tag ?? GONE, leave }
  }

  /** Open streams on this replica. */
  get streams(): number {
    let n = 0
    for (const g of this.groups.values()) n += g.listeners.size
    return n
  }

  close(): void {
    this.unlisten()
    clearInterval(this.timer)
    this.groups.clear()
    this.byProject.clear()
  }

  private invalidated(projectId: string | null, keys: boolean): void {
    const groups = projectId === null ? [...this.groups.values()] : [...(this.byProject.get(projectId) ?? [])]
    for (const g of groups) {
      this.refresh(g).catch((err) => logger.warn({ err: String(err), snapshot: g.id }, 'change stream refresh failed'))
      if (keys) void this.recheckKeys(g)
    }
  }

  /** Reloads the flag set (once, however many invalidations arrive meanwhile) and tells its streams if the tag moved. */
  private refresh(g: Group): Promise<void> {
    if (g.running) {
      g.again = true
      return g.running
    }
    const run = async () => {
      do {
        g.again = false
        const snap = await this.cache.snapshot(g.id)
        const tag = snap?.tag ?? GONE
        if (tag === g.tag) continue
        g.tag = tag
        for (const l of g.listeners) l.onTag(tag)
      } while (g.again)
    }
    const p = run().finally(() => {
      g.running = null
    })
    g.running = p
    return p
  }

  /** After a key rotation (or a removed environment): end the streams whose key no longer opens this flag set. */
  private async recheckKeys(g: Group): Promise<void> {
    const verdict = new Map<string, boolean>()
    for (const l of [...g.listeners]) {
      let ok = verdict.get(l.sdkKey)
      if (ok === undefined) {
        try {
          ok = (await this.cache.resolveKey(l.sdkKey))?.projectId === g.id
        } catch (err) {
          logger.warn({ err: String(err) }, 'change stream key check failed')
          return
        }
        verdict.set(l.sdkKey, ok)
      }
      if (!ok) l.onRevoked()
    }
  }
}
