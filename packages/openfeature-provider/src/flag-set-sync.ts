// Keeps an in-process copy of one environment's flag set current: loads it from the service's
// flag-set endpoint (GET /api/v1/flag-set, a server SDK key), follows the change stream
// (GET /ofrep/v1/stream) and re-fetches when the tag it announces differs from the copy's, and
// falls back to ETag polling (If-None-Match → 304) while the stream is down. Every good copy is
// saved to `cacheFile` when one is set, so a process can start from it while the service is
// unreachable; `status()` says where the copy came from and how old it is.
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises'
import { dirname } from 'node:path'
import { createParser } from 'eventsource-parser'
import { compileFlagSet, FLAG_SET_FORMAT_VERSION, type CompiledFlagSet, type FlagSetV1 } from '../../../src/flags/engine/flag-set.ts'
import type { SyncOptions, SyncStatus } from './sync-options.ts'

export interface Copy {
  set: FlagSetV1
  compiled: CompiledFlagSet
  source: 'service' | 'file'
  /** Keeps the shared set (and its compiled flags) alive while this copy is in use. */
  shared: SharedSet
}

/** The service refused the key (401/403): retrying will not help. */
export class KeyRefusedError extends Error {}

interface SavedCopy {
  saved_at: string
  flag_set: FlagSetV1
}

export interface SyncEvents {
  /** The copy now in use was compiled as `compiled` (called for every new copy, also one of the same tag, before `changed`). */
  inUse(compiled: CompiledFlagSet): void
  /** A new copy is in use; `changed` lists the flag keys whose definitions differ (added and removed included). */
  changed(changed: string[]): void
  /** The service could not be reached (first failure after success), or could again. */
  reachability(reachable: boolean, error: string | null): void
}

/** A flag set as read and compiled once, with the changes from the sets it replaced. */
interface SharedSet {
  set: FlagSetV1
  compiled: CompiledFlagSet
  /** changedKeys(before, set) by the before set's tag. */
  changedFrom: Map<string, string[]>
}

/**
 * Sets by flag set and tag, shared by the providers of one process (several OpenFeature domains,
 * or many providers in a benchmark): compiling (regular expressions above all), parsing the answer
 * and comparing it with the previous set are the costs of an update, and the tag names the set's
 * content (a hash of its definitions), so one read serves every provider that fetches that tag.
 */
const sharedSets = new Map<string, WeakRef<SharedSet>>()
const sharedId = (project: string, environment: string, etag: string) => `${project}/${environment}/${etag}`

/** The shared set of `set`; only sets the service answered are shared (never a saved file's). */
function sharedOf(set: FlagSetV1, fromService: boolean): SharedSet {
  const id = sharedId(set.project, set.environment, set.etag)
  const hit = sharedSets.get(id)?.deref()
  if (hit) return hit
  const shared: SharedSet = { set, compiled: compileFlagSet(set.flags, set.segments), changedFrom: new Map() }
  if (!fromService) return shared
  for (const [k, ref] of sharedSets) if (!ref.deref()) sharedSets.delete(k)
  sharedSets.set(id, new WeakRef(shared))
  return shared
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms)
    signal.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true })
  })

function checkSet(v: unknown): FlagSetV1 {
  const s = v as FlagSetV1
  if (!s || typeof s !== 'object' || s.format_version !== FLAG_SET_FORMAT_VERSION || !Array.isArray(s.flags) || !Array.isArray(s.segments) || typeof s.etag !== 'string') {
    throw new Error(`not a flag set of format ${FLAG_SET_FORMAT_VERSION}`)
  }
  return s
}

export class FlagSetSync {
  copy: Copy | null = null
  private confirmedAt: number | null = null
  private streaming = false
  /** A tag announced by the stream that the copy does not have yet. */
  private behind = false
  private unreachable = false
  private lastError: string | null = null
  private refreshing: Promise<void> | null = null
  private again: string | undefined | null = null
  private readonly stop = new AbortController()
  private pollTimer: NodeJS.Timeout | null = null
  private started = false

  constructor(
    private readonly opts: SyncOptions,
    private readonly events: SyncEvents,
  ) {}

  /**
   * Loads the set (the service first, then the saved copy) and starts following changes. Throws
   * KeyRefusedError for a refused key, or the service's error when neither source had a set (the
   * loops keep trying: `changed` fires once one arrives).
   */
  async start(): Promise<void> {
    if (this.started) return
    this.started = true
    let failure: unknown = null
    try {
      await this.refresh()
    } catch (err) {
      failure = err
    }
    if (failure instanceof KeyRefusedError) {
      this.close()
      throw failure
    }
    if (!this.copy) {
      const saved = await this.readSaved()
      if (saved) this.use(saved.flag_set, 'file', Date.parse(saved.saved_at))
    }
    this.loops()
    if (!this.copy) throw failure ?? new Error('no flag set')
  }

  close(): void {
    this.stop.abort()
    if (this.pollTimer) clearInterval(this.pollTimer)
    this.streaming = false
  }

  status(): SyncStatus {
    const now = Date.now()
    const current = this.streaming && !this.behind && !this.unreachable
    return {
      source: this.copy?.source ?? 'none',
      etag: this.copy?.set.etag ?? null,
      confirmedAt: current ? new Date(now).toISOString() : this.confirmedAt === null ? null : new Date(this.confirmedAt).toISOString(),
      stalenessMs: current ? 0 : this.confirmedAt === null ? null : Math.max(0, now - this.confirmedAt),
      streaming: this.streaming,
      unreachable: this.unreachable,
      lastError: this.lastError,
    }
  }

  /** Fetches the set (If-None-Match with the copy's tag); one at a time, a call meanwhile runs once after. */
  refresh(told?: string): Promise<void> {
    if (this.refreshing) {
      this.again = told ?? this.again ?? undefined
      return this.refreshing
    }
    const run = async () => {
      let t: string | undefined = told
      for (;;) {
        this.again = null
        await this.fetchOnce(t)
        if (this.again === null) return
        t = this.again ?? undefined
      }
    }
    this.refreshing = run().finally(() => {
      this.refreshing = null
    })
    return this.refreshing
  }

  private signal(): AbortSignal {
    return AbortSignal.any([this.stop.signal, AbortSignal.timeout(this.opts.requestTimeoutMs ?? 5_000)])
  }

  private async fetchOnce(told?: string): Promise<void> {
    const url = new URL('/api/v1/flag-set', this.opts.url)
    if (told) url.searchParams.set('flagConfigEtag', told)
    const headers: Record<string, string> = { authorization: `Bearer ${this.opts.serverKey}`, accept: 'application/json' }
    if (this.copy?.source === 'service') headers['if-none-match'] = `"${this.copy.set.etag}"`
    let res: Response
    try {
      res = await fetch(url, { headers, signal: this.signal() })
    } catch (err) {
      throw this.failed(`flag service unreachable: ${(err as Error).message}`)
    }
    if (res.status === 304) {
      await res.body?.cancel()
      return this.reached(told)
    }
    // A set this process has already read (another provider of the same environment fetched the
    // same tag, as all of them do after a change): its answer need not be read again.
    const etag = res.status === 200 && this.copy ? res.headers.get('etag') : null
    const known = etag ? sharedSets.get(sharedId(this.copy!.set.project, this.copy!.set.environment, etag.replace(/^W\//, '').replaceAll('"', '')))?.deref() : undefined
    if (known) {
      await res.body?.cancel()
      this.use(known.set, 'service', Date.now())
      this.reached(told)
      return this.save(known.set)
    }
    const text = await res.text().catch(() => '')
    if (res.status === 401 || res.status === 403) {
      let msg = text
      try {
        msg = JSON.parse(text).error ?? text
      } catch {}
      this.failed(`flag set refused (${res.status}): ${msg}`)
      throw new KeyRefusedError(`flag set refused (${res.status}): ${msg}`)
    }
    if (res.status !== 200) throw this.failed(`flag set answered ${res.status}: ${text.slice(0, 200)}`)
    let set: FlagSetV1
    try {
      set = checkSet(JSON.parse(text))
    } catch (err) {
      throw this.failed(`flag set unreadable: ${(err as Error).message}`)
    }
    this.use(set, 'service', Date.now())
    this.reached(told)
    await this.save(set)
  }

  private reached(told?: string): void {
    this.confirmedAt = Date.now()
    if (told === undefined || told === this.copy?.set.etag) this.behind = false
    if (this.unreachable) {
      this.unreachable = false
      this.lastError = null
      this.events.reachability(true, null)
    }
  }

  private failed(message: string): Error {
    this.lastError = message
    if (!this.unreachable) {
      this.unreachable = true
      this.events.reachability(false, message)
    }
    return new Error(message)
  }

  private use(set: FlagSetV1, source: 'service' | 'file', confirmedAt: number): void {
    const before = this.copy?.set
    const shared = sharedOf(set, source === 'service')
    this.copy = { set: shared.set, compiled: shared.compiled, source, shared }
    this.events.inUse(shared.compiled)
    this.confirmedAt = confirmedAt
    if (before?.etag === set.etag) return
    let changed = before ? shared.changedFrom.get(before.etag) : undefined
    if (!changed) {
      changed = changedKeys(before, shared.set)
      if (before) shared.changedFrom.set(before.etag, changed)
    }
    this.events.changed([...changed])
  }

  private async readSaved(): Promise<SavedCopy | null> {
    if (!this.opts.cacheFile) return null
    try {
      const saved = JSON.parse(await readFile(this.opts.cacheFile, 'utf8')) as SavedCopy
      checkSet(saved.flag_set)
      if (Number.isNaN(Date.parse(saved.saved_at))) return null
      return saved
    } catch {
      // Missing, damaged or of another format: as if there were none.
      return null
    }
  }

  private async save(set: FlagSetV1): Promise<void> {
    const file = this.opts.cacheFile
    if (!file) return
    const saved: SavedCopy = { saved_at: new Date().toISOString(), flag_set: set }
    // Write then rename: a crash mid-write never leaves a half copy to start from.
    const tmp = `${file}.${process.pid}.tmp`
    try {
      await mkdir(dirname(file), { recursive: true })
      await writeFile(tmp, JSON.stringify(saved))
      await rename(tmp, file)
    } catch (err) {
      this.lastError = `saving the flag set to ${file} failed: ${(err as Error).message}`
    }
  }

  private loops(): void {
    const every = this.opts.pollIntervalMs ?? 10_000
    this.pollTimer = setInterval(() => {
      if (this.streaming && !this.behind && this.copy) return
      this.refresh().catch(() => {})
    }, every)
    this.pollTimer.unref()
    if (this.opts.stream !== false) void this.streamLoop()
  }

  private async streamLoop(): Promise<void> {
    const max = this.opts.maxStreamRetryMs ?? 5_000
    let delay = 250
    while (!this.stop.signal.aborted) {
      try {
        const res = await fetch(new URL('/ofrep/v1/stream', this.opts.url), {
          headers: { authorization: `Bearer ${this.opts.serverKey}`, accept: 'text/event-stream' },
          signal: this.stop.signal,
        })
        if (res.status === 401 || res.status === 403) {
          // The key is refused: polling reports it; reconnecting at full speed would not help.
          await res.body?.cancel()
          delay = max
        } else if (res.status !== 200 || !res.body) {
          await res.body?.cancel()
        } else {
          delay = 250
          const parser = createParser({ onEvent: (e) => this.onStreamEvent(e.data) })
          const reader = res.body.pipeThrough(new TextDecoderStream()).getReader()
          for (;;) {
            const { value, done } = await reader.read()
            if (done) break
            parser.feed(value)
          }
        }
      } catch {
        /* reconnect below */
      }
      this.streaming = false
      if (this.stop.signal.aborted) return
      // Changes made while the stream was down are found by polling now, not at the next tick.
      this.refresh().catch(() => {})
      await sleep(delay, this.stop.signal)
      delay = Math.min(delay * 2, max)
    }
  }

  private onStreamEvent(data: string): void {
    let m: { type?: unknown; etag?: unknown }
    try {
      m = JSON.parse(data)
    } catch {
      return
    }
    if (m.type !== 'connected' && m.type !== 'refetchEvaluation') return
    if (m.type === 'connected') this.streaming = true
    const etag = typeof m.etag === 'string' ? m.etag : undefined
    if (etag !== undefined && etag === this.copy?.set.etag && this.copy.source === 'service') {
      if (m.type === 'connected') this.reached()
      return
    }
    this.behind = true
    this.refresh(etag).catch(() => {})
  }
}

/** Keys of flags added, removed or changed between two sets. */
function changedKeys(before: FlagSetV1 | undefined, after: FlagSetV1): string[] {
  const old = new Map((before?.flags ?? []).map((f) => [f.key, JSON.stringify(f)]))
  const out: string[] = []
  const segmentsMoved = JSON.stringify(before?.segments ?? []) !== JSON.stringify(after.segments)
  for (const f of after.flags) {
    const was = old.get(f.key)
    if (was === undefined || was !== JSON.stringify(f) || (segmentsMoved && f.rules.some((r) => r.segments?.length))) out.push(f.key)
    old.delete(f.key)
  }
  out.push(...old.keys())
  return out.sort()
}
