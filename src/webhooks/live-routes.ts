// The live side of the management API: GET …/{token}/stream, Server-Sent Events of new captures,
// forward-attempt updates, local-delivery reports and the endpoint's own changes (its settings;
// its deletion, after which the stream ends); and POST …/requests/{id}/local-delivery,
// where the `listen` CLI reports what its local target answered. The stream authenticates with
// the Authorization header like every other route (the page reads it with fetch(), not
// EventSource, so the key is never in a URL). A resume (Last-Event-ID) replays captures with a
// larger id from MongoDB after subscribing, then goes live, so nothing falls in between.
import Router from '@koa/router'
import type { Context } from 'koa'
import { clock } from '../platform/clock.ts'
import { requireApiKey } from '../platform/http/auth.ts'
import { badRequest, notFound } from '../platform/http/errors.ts'
import { openSse, type SseStream } from '../platform/http/sse.ts'
import { input, validate } from '../platform/http/validate.ts'
import type { Platform } from '../platform/platform.ts'
import { captureCollection, captureKey, capturesAfter, type LocalDelivery } from './store/capture-store.ts'
import { endpoints } from './store/endpoint-store.ts'
import { liveCapture, publishLive, type LiveEvent, type LiveHub } from './live/live-hub.ts'
import { localDeliverySchema, streamSchema } from './live-schema.ts'
import { LIVE_STREAM_OPENAPI } from './live-openapi.ts'
import { describedAs } from '../platform/ops/openapi.ts'
import { presentLocalDelivery } from './store/present.ts'
import { ENDPOINT_NOT_FOUND, ownEndpoint } from './own-endpoint.ts'
import { untrusted } from './untrusted-response.ts'

/** Comment lines keep proxies and clients from calling an idle stream dead (at most 25 s apart, under common proxies' idle cut-offs). */
export const HEARTBEAT_MS = 20_000
/** A client this far behind is cut off; it reconnects and resumes from MongoDB (bounded memory). */
const MAX_BUFFERED = 4 * 1024 * 1024
const CATCH_UP_BATCH = 200

// The hub hands one parsed event to every stream of the endpoint: serialise it once, not per stream.
const frames = new WeakMap<LiveEvent, string>()
function frame(ev: LiveEvent): string {
  let f = frames.get(ev)
  if (f === undefined) {
    const id = ev.type === 'capture' ? `id: ${ev.id}\n` : ''
    frames.set(ev, (f = `${id}event: ${ev.type}\ndata: ${JSON.stringify(ev.data)}\n\n`))
  }
  return f
}

function lastEventId(ctx: Context, fromQuery: number | undefined): number | undefined {
  const h = ctx.get('last-event-id')
  if (h === '') return fromQuery
  if (!/^\d{1,15}$/.test(h.trim())) throw badRequest('Last-Event-ID must be a non-negative integer (a capture id)')
  return Number(h.trim())
}

export function liveRouter(platform: Platform, hub: LiveHub): Router {
  const { db } = platform
  const router = new Router({ prefix: '/api/v1' })
  const auth = requireApiKey(platform, 'webhooks')

  router.get('/endpoints/:token/stream', describedAs(LIVE_STREAM_OPENAPI), auth, untrusted, validate(streamSchema), async (ctx) => {
    const { params, query } = input(ctx, streamSchema)
    const after = lastEventId(ctx, query.last_event_id)
    // Everything that can fail with a status fails here, before the stream opens.
    const ep = await ownEndpoint(db, ctx, params.token)

    let stream: SseStream | undefined
    let live = false
    const early: LiveEvent[] = []
    // Capture ids already sent: a capture stored late (group commit) may arrive after a newer one.
    const sent = new Set<number>()
    let maxSent = after ?? 0
    const send = (ev: LiveEvent) => {
      if (!stream || stream.closed) return
      if (ev.type === 'capture') {
        if (sent.has(ev.id)) return
        sent.add(ev.id)
        maxSent = Math.max(maxSent, ev.id)
        // Keep the set small: ids far below the newest will not come again.
        if (sent.size > 2_000) for (const id of sent) if (id < maxSent - 1_000) sent.delete(id)
      }
      stream.sendFrame(frame(ev))
      // Nothing more will come: the client hears why the stream ends rather than a bare drop.
      if (ev.type === 'endpoint_deleted') stream.close()
    }
    const unsubscribe = await hub.subscribe(ep._id, (ev) => (live ? send(ev) : early.push(ev)))
    // Deleted between the check above and the subscription: its endpoint_deleted event reached no
    // one here, so the refusal a later connect would get is given now (any deletion after this
    // point arrives as the event).
    if (!(await endpoints(db).findOne({ _id: ep._id }, { projection: { _id: 1 } }))) {
      unsubscribe()
      throw notFound(ENDPOINT_NOT_FOUND)
    }
    stream = openSse(ctx, { heartbeatMs: HEARTBEAT_MS, retryMs: 2000, maxBufferedBytes: MAX_BUFFERED, onClose: unsubscribe })
    stream.comment(`connected to ${ep._id}`)
    const closed = () => stream!.closed
    if (after !== undefined) {
      for (let from = after; !closed(); ) {
        const top = (await endpoints(db).findOne({ _id: ep._id }))?.seq ?? ep.seq
        const docs = await capturesAfter(db, ep._id, { after: from, top, limit: CATCH_UP_BATCH })
        for (const d of docs) send({ type: 'capture', id: d.id, data: liveCapture(d) })
        if (docs.length < CATCH_UP_BATCH) break
        from = docs.at(-1)!.id
      }
    }
    live = true
    for (const ev of early.splice(0)) send(ev)
    stream.comment('live')
  })

  router.post('/endpoints/:token/requests/:id/local-delivery', auth, validate(localDeliverySchema), async (ctx) => {
    const { params, body } = input(ctx, localDeliverySchema)
    const ep = await ownEndpoint(db, ctx, params.token)
    const report: LocalDelivery = { ...body, at: clock.now() }
    const r = await captureCollection(db, ep._id, params.id).updateOne({ _id: captureKey(ep._id, params.id) }, { $set: { local_delivery: report } })
    if (r.matchedCount === 0) throw notFound('Request not found')
    const local_delivery = presentLocalDelivery(report)
    await publishLive(platform, ep._id, { type: 'local_delivery', id: params.id, data: { id: params.id, local_delivery } })
    ctx.body = { id: params.id, local_delivery }
  })

  return router
}
