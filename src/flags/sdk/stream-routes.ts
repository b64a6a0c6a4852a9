// GET /ofrep/v1/stream: the change stream of one SDK key's flag set, as OFREP's event-stream
// proposal (ADR-0008) describes it: Server-Sent Events whose JSON data says `refetchEvaluation`
// when the flags that key evaluates may have changed; the client then re-fetches the bulk
// evaluation. Every event's id is the flag set's tag, so a reconnect (Last-Event-ID) is compared
// with the current state and told at once if anything moved meanwhile — nothing is missed without
// keeping a log. Authentication and the open-stream limit are decided before the stream opens, so
// a refusal is a plain JSON answer, never an event stream.
import Router from '@koa/router'
import type { Context } from 'koa'
import { badRequest, HttpError } from '../../platform/http/errors.ts'
import { openSse } from '../../platform/http/sse.ts'
import type { ChangeHub } from './change-hub.ts'
import { EMPTY_SNAPSHOT } from './evaluate-routes.ts'
import { corsByProject } from './evaluation-cors.ts'
import type { FlagCache } from './flag-cache.ts'
import { SDK_UNAUTHORIZED, sdkKeyOf, type Admit } from './sdk-auth.ts'
import type { StreamSlots } from './stream-slots.ts'
import { FLAG_STREAM_OPENAPI } from './stream-openapi.ts'
import { describedAs } from '../../platform/ops/openapi.ts'

export const STREAM_PATH = '/ofrep/v1/stream'
/** The reconnect delay suggested to clients (`retry:`). */
const RETRY_MS = 2_000
const MAX_EVENT_ID = 200

export interface StreamRouteOptions {
  heartbeatMs: number
}

/** Header first (servers, SDKs); the query string for browsers' EventSource, which cannot set headers. */
function streamKey(ctx: Context): string | undefined {
  const header = sdkKeyOf(ctx)
  if (header !== undefined) return header
  const q = ctx.query.sdk_key
  return typeof q === 'string' && q !== '' ? q : undefined
}

function lastEventId(ctx: Context): string | undefined {
  const h = ctx.get('last-event-id')
  if (h === '') return undefined
  if (h.length > MAX_EVENT_ID) throw badRequest(`Last-Event-ID must be at most ${MAX_EVENT_ID} characters (an event id this stream sent)`)
  return h
}

const eventData = (type: 'connected' | 'refetchEvaluation', tag: string) => JSON.stringify({ type, etag: tag })

export function streamRouter(cache: FlagCache, admit: Admit, hub: ChangeHub, slots: StreamSlots, opts: StreamRouteOptions): Router {
  const router = new Router()

  router.get(STREAM_PATH, describedAs(FLAG_STREAM_OPENAPI), async (ctx) => {
    const sdkKey = streamKey(ctx)
    const keysBefore = cache.keyGeneration
    const entry = await admit(sdkKey, { 'WWW-Authenticate': 'Bearer' })
    const after = lastEventId(ctx)
    const snap = (await cache.snapshot(entry.projectId)) ?? EMPTY_SNAPSHOT
    corsByProject(ctx, snap.origins)
    const release = await slots.acquire(entry.accountId, entry.plan)

    let stream: ReturnType<typeof openSse> | null = null
    let sent: string | undefined = after
    let latest: string | undefined
    const deliver = (tag: string) => {
      if (!stream || tag === sent) return
      sent = tag
      stream.send({ id: tag, event: 'message', data: eventData('refetchEvaluation', tag) })
    }
    let revoked = false
    let joined: Awaited<ReturnType<ChangeHub['join']>>
    try {
      joined = await hub.join(entry, {
        sdkKey: sdkKey!,
        onTag: (tag) => {
          latest = tag
          deliver(tag)
        },
        onRevoked: () => {
          revoked = true
          stream?.close()
        },
      })
      // A rotation seen between the key's check and the join told the hub before this stream was
      // in it: check the key again, or a revoked key would keep its stream open.
      if (!revoked && cache.keyGeneration !== keysBefore) revoked = (await cache.resolveKey(sdkKey!))?.projectId !== entry.projectId
      if (revoked) {
        joined.leave()
        throw new HttpError(401, SDK_UNAUTHORIZED, { 'WWW-Authenticate': 'Bearer' })
      }
    } catch (err) {
      release()
      throw err
    }
    stream = openSse(ctx, {
      heartbeatMs: opts.heartbeatMs,
      retryMs: RETRY_MS,
      onClose: () => {
        joined.leave()
        release()
      },
    })
    const current = latest ?? joined.tag
    if (after === undefined) {
      // A first connection learns the current state (and its id, for a later Last-Event-ID):
      // an event type providers ignore, as the proposal asks of unknown types.
      sent = current
      stream.send({ id: current, event: 'message', data: eventData('connected', current) })
    } else {
      deliver(current)
    }
  })

  return router
}
