// GET /api/v1/projects/{id}/events: the console's live view of a project, as Server-Sent Events.
// Each change recorded in the project's audit history (flags, segments, environments, keys, the
// project, its webhooks; made anywhere: another browser, the API, another replica) becomes one
// `change` event: {kind, key, environment, version, deleted?, type, id, at}. Changes are heard
// the way the OFREP change streams hear them: the flag cache's invalidations, which every replica
// gets through Redis pub/sub within milliseconds; as a safety net each watched project's version
// is read once a second. On either, the project's newest history entries are read once per
// replica (however many consoles watch it) and those not sent yet go out. An event's id is its
// history entry id: a reconnect (Last-Event-ID) gets what it missed, or `reset` when that is
// more than one read can tell. The credentials are checked again every 5 s: a stream whose key
// was rotated away, whose session ended, or whose project was deleted, gets `ended` (with the
// reason) and is closed.
import Router from '@koa/router'
import type { Context } from 'koa'
import type { Db } from 'mongodb'
import { z } from 'zod'
import { accountOf, bearerToken, requireApiKey, UNAUTHORIZED } from '../platform/http/auth.ts'
import { findAccountByKey } from '../platform/accounts.ts'
import { findSessionByHash, NOT_SIGNED_IN, SESSION_REVOKED, type ConsoleSessionDoc } from '../platform/http/console-session.ts'
import { badRequest, notFound } from '../platform/http/errors.ts'
import { openSse, type SseStream } from '../platform/http/sse.ts'
import { input, validate } from '../platform/http/validate.ts'
import { logger } from '../platform/logger.ts'
import { clock } from '../platform/clock.ts'
import type { Platform } from '../platform/platform.ts'
import { describedAs, eventStreamResponse } from '../platform/ops/openapi.ts'
import type { FlagCache } from './sdk/flag-cache.ts'
import type { StreamSlots } from './sdk/stream-slots.ts'
import { history, type HistoryDoc } from './changes/history-store.ts'
import { flags, versionOf } from './store/flag-store.ts'
import { segments } from './store/segment-store.ts'
import { getProject, projects } from './store/project-store.ts'
import { projectParams } from './flag-schema.ts'

/** Entries read per look: more new ones than this at once (a bulk import) is a `reset`. */
const BATCH = 200
/** How far back a look reaches: an entry committed later than this after it was written (a request that stalled) is still sent. */
const WINDOW_MS = 120_000
const RETRY_MS = 2_000
const MAX_EVENT_ID = 64

export interface ChangeEvent {
  id: string
  kind: string
  key: string
  environment: string | null
  version: number | null
  deleted?: true
  type: string
  at: string
}

interface Listener {
  send(events: ChangeEvent[]): void
  reset(): void
  /** Null while the credentials the stream opened with are still good, else why not. */
  refusal(): Promise<string | null>
  /** Sends `ended` with the message (none: just closes) and closes the stream. */
  end(message: string | null): void
}

interface Group {
  projectId: string
  listeners: Set<Listener>
  /** Entry ids already sent (or there before the first listener came). */
  seen: Set<string>
  version: number | null
  running: Promise<void> | null
  again: boolean
}

const idFloor = (ms: number) => Math.max(0, ms).toString(36).padStart(9, '0')

/** The version of the flags and segments named by the entries, read in one query per kind. */
async function versions(db: Db, projectId: string, entries: HistoryDoc[]): Promise<Map<string, number>> {
  const out = new Map<string, number>()
  const of = (kind: string) => [...new Set(entries.filter((e) => e.kind === kind && e.after !== null).map((e) => e.target))]
  const flagKeys = of('flag')
  const segmentNames = of('segment')
  if (flagKeys.length) for (const f of await flags(db).find({ project_id: projectId, key: { $in: flagKeys } }, { projection: { key: 1, version: 1 } }).toArray()) out.set(`flag/${f.key}`, versionOf(f))
  if (segmentNames.length) for (const s of await segments(db).find({ project_id: projectId, name: { $in: segmentNames } }, { projection: { name: 1, version: 1 } }).toArray()) out.set(`segment/${s.name}`, versionOf(s))
  return out
}

function eventOf(e: HistoryDoc, v: Map<string, number>): ChangeEvent {
  const deleted = e.after === null
  return {
    id: e._id,
    kind: e.kind,
    key: e.target,
    environment: e.environment ?? null,
    version: v.get(`${e.kind}/${e.target}`) ?? null,
    ...(deleted ? { deleted: true as const } : {}),
    type: e.type ?? `${e.kind}.updated`,
    at: e.at.toISOString(),
  }
}

export class ProjectEvents {
  private readonly groups = new Map<string, Group>()
  private readonly unlisten: () => void
  private readonly timer: NodeJS.Timeout
  private ticks = 0

  constructor(
    private readonly db: Db,
    cache: FlagCache,
    private readonly opts: { checkMs?: number; authEvery?: number } = {},
  ) {
    this.unlisten = cache.onInvalidate((projectId) => {
      const gs = projectId === null ? [...this.groups.values()] : [this.groups.get(projectId)].filter((g): g is Group => g !== undefined)
      for (const g of gs) this.refresh(g)
    })
    this.timer = setInterval(() => void this.tick(), opts.checkMs ?? 1_000)
    this.timer.unref()
  }

  /** Newest committed entries of the project within the window, newest first. */
  private newest(projectId: string): Promise<HistoryDoc[]> {
    const floor = idFloor(clock.nowMs() - WINDOW_MS)
    return history(this.db).findSorted({ project_id: projectId, state: 'committed', _id: { $gt: floor } }, '_id', -1, BATCH)
  }

  async join(projectId: string, listener: Listener, lastEventId?: string): Promise<() => void> {
    let g = this.groups.get(projectId)
    if (!g) {
      g = { projectId, listeners: new Set(), seen: new Set(), version: null, running: null, again: false }
      // What is in the window now is history, not news.
      for (const e of await this.newest(projectId)) g.seen.add(e._id)
      const existing = this.groups.get(projectId)
      if (existing) g = existing
      else this.groups.set(projectId, g)
    }
    const group = g
    group.listeners.add(listener)
    const leave = () => {
      group.listeners.delete(listener)
      if (group.listeners.size === 0 && this.groups.get(projectId) === group) this.groups.delete(projectId)
    }
    if (lastEventId !== undefined) {
      try {
        // A reconnect: what it missed since its last event, or `reset` if that cannot be told.
        const missed = await history(this.db).findSorted({ project_id: projectId, state: 'committed', _id: { $gt: lastEventId } }, '_id', 1, BATCH + 1)
        if (missed.length > BATCH) listener.reset()
        else if (missed.length > 0) {
          const v = await versions(this.db, projectId, missed)
          listener.send(missed.map((e) => eventOf(e, v)))
        }
      } catch (err) {
        leave()
        throw err
      }
    }
    return leave
  }

  get streams(): number {
    let n = 0
    for (const g of this.groups.values()) n += g.listeners.size
    return n
  }

  close(): void {
    this.unlisten()
    clearInterval(this.timer)
    // Closed without `ended`: the browser's EventSource reconnects, to another replica or this one restarted.
    for (const g of this.groups.values()) for (const l of [...g.listeners]) l.end(null)
    this.groups.clear()
  }

  private async tick(): Promise<void> {
    this.ticks++
    const list = [...this.groups.values()]
    if (list.length === 0) return
    try {
      const docs = await projects(this.db).find({ _id: { $in: list.map((g) => g.projectId) } }, { projection: { version: 1 } }).toArray()
      const byId = new Map(docs.map((d) => [d._id, d.version]))
      for (const g of list) {
        const v = byId.get(g.projectId) ?? null
        if (v !== g.version) {
          g.version = v
          this.refresh(g)
        }
      }
    } catch (err) {
      logger.warn({ err: String(err) }, 'console events version check failed')
    }
    if (this.ticks % (this.opts.authEvery ?? 5) === 0) for (const g of list) for (const l of [...g.listeners]) void this.recheck(l)
  }

  private async recheck(l: Listener): Promise<void> {
    try {
      const why = await l.refusal()
      if (why) l.end(why)
    } catch (err) {
      logger.warn({ err: String(err) }, 'console events credential check failed')
    }
  }

  /** Reads the project's new entries once (however many triggers arrive meanwhile) and sends them. */
  private refresh(g: Group): void {
    if (g.running) {
      g.again = true
      return
    }
    const run = async () => {
      do {
        g.again = false
        const fresh = (await this.newest(g.projectId)).filter((e) => !g.seen.has(e._id)).reverse()
        if (fresh.length === 0) continue
        for (const e of fresh) g.seen.add(e._id)
        if (g.seen.size > BATCH * 4) {
          const keep = [...g.seen].sort().slice(-BATCH * 2)
          g.seen = new Set(keep)
        }
        const v = await versions(this.db, g.projectId, fresh)
        const events = fresh.map((e) => eventOf(e, v))
        for (const l of g.listeners) l.send(events)
      } while (g.again)
    }
    g.running = run()
      .catch((err) => logger.warn({ err: String(err), project: g.projectId }, 'console events refresh failed'))
      .finally(() => {
        g.running = null
      })
  }
}

export const eventsSchema = z.object({ params: projectParams })

const changeData = {
  type: 'object',
  properties: {
    id: { type: 'string', description: 'The history entry of the change (GET …/history).' },
    kind: { type: 'string', enum: ['flag', 'segment', 'project', 'environment', 'sdk_key', 'webhook'] },
    key: { type: 'string', description: 'Flag key, segment name, environment name, webhook id or project id.' },
    environment: { type: ['string', 'null'], description: 'The one environment the change touched (null: shared by all).' },
    version: { type: ['integer', 'null'], description: 'The flag\'s or segment\'s version after the change (its ETag), if it still exists.' },
    deleted: { const: true },
    type: { type: 'string', description: '`flag.updated`, `segment.deleted`, `sdk_key.rotated`…' },
    at: { type: 'string', format: 'date-time' },
  },
  required: ['id', 'kind', 'key', 'environment', 'version', 'type', 'at'],
}

const OPENAPI = describedAs({
  summary: "A project's changes, live (Server-Sent Events)",
  description:
    'One `change` event per change recorded in the project\'s history, within about 1 s, wherever it was made. ' +
    'Authenticate with the Bearer key or the console\'s session cookie (EventSource sends it). Reconnect with ' +
    '`Last-Event-ID` to receive what was missed, or a `reset` event (read everything again). `ended` is sent, and ' +
    'the stream closed, when the key is rotated away or the session ends. Counts toward the account\'s open-stream limit.',
  parameters: [{ name: 'Last-Event-ID', in: 'header', required: false, description: 'The id of the last event received.', schema: { type: 'string' } }],
  responses: {
    '200': eventStreamResponse('The event stream.', [
      { event: 'ready', description: 'First event: the stream is open.', data: { type: 'object', properties: { project: { type: 'string' } }, required: ['project'] } },
      { event: 'change', id: 'The history entry id.', description: 'Something in the project changed.', data: changeData },
      { event: 'reset', description: 'Too much was missed to list: read the project again.', data: { type: 'object' } },
      { event: 'ended', description: 'The credentials are no longer valid; the stream closes.', data: { type: 'object', properties: { error: { type: 'string' } }, required: ['error'] } },
    ]),
    '429': { description: "The account's open-stream limit is reached.", content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
  },
})

function lastEventIdOf(ctx: Context): string | undefined {
  const h = ctx.get('last-event-id')
  if (h === '') return undefined
  if (h.length > MAX_EVENT_ID || !/^[0-9a-z]{9}[0-9A-Za-z]{12}$/.test(h)) throw badRequest('Last-Event-ID must be the id of an event this stream sent')
  return h
}

export function eventsRouter(platform: Platform, hub: ProjectEvents, slots: StreamSlots): Router {
  const router = new Router({ prefix: '/api/v1/projects/:id' })
  const db = platform.db

  router.get('/events', OPENAPI, requireApiKey(platform, 'flags'), validate(eventsSchema), async (ctx) => {
    const { params } = input(ctx, eventsSchema)
    const account = accountOf(ctx)
    const last = lastEventIdOf(ctx)
    const p = await getProject(db, account._id, params.id)
    if (!p) throw notFound('Project not found')
    const session = ctx.state.session as ConsoleSessionDoc | undefined
    const token = bearerToken(ctx)
    const release = await slots.acquire(account._id, account.plan)
    let stream: SseStream | null = null
    const pending: (() => void)[] = []
    const whenOpen = (f: () => void) => (stream ? f() : pending.push(f))
    const listener: Listener = {
      send: (events) => whenOpen(() => { for (const ev of events) stream!.send({ id: ev.id, event: 'change', data: JSON.stringify(ev) }) }),
      reset: () => whenOpen(() => void stream!.send({ event: 'reset', data: '{}' })),
      refusal: async () => {
        if (!(await getProject(db, account._id, p._id))) return 'Project not found'
        if (session) {
          const found = await findSessionByHash(db, 'flags', session._id)
          return found.ok ? null : found.reason === 'revoked' ? SESSION_REVOKED : NOT_SIGNED_IN
        }
        return token !== null && (await findAccountByKey(db, 'flags', token)) !== null ? null : UNAUTHORIZED
      },
      end: (message) =>
        whenOpen(() => {
          if (message !== null) stream!.send({ event: 'ended', data: JSON.stringify({ error: message }) })
          stream!.close()
        }),
    }
    let leave: () => void
    try {
      leave = await hub.join(p._id, listener, last)
    } catch (err) {
      release()
      throw err
    }
    stream = openSse(ctx, {
      heartbeatMs: platform.config.FLAGS_STREAM_HEARTBEAT_MS,
      retryMs: RETRY_MS,
      onClose: () => {
        leave()
        release()
      },
    })
    stream.send({ event: 'ready', data: JSON.stringify({ project: p._id }) })
    for (const f of pending.splice(0)) f()
  })

  return router
}
