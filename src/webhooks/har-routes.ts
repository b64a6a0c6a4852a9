// HAR 1.2 export: GET …/{token}/requests.har (the same filters and paging as …/requests, oldest
// first as HAR viewers expect; bodies over 1 MiB left out as in lists) and GET …/{token}/requests/{id}.har (one capture). Mounted ahead
// of endpoint-routes.ts, whose …/requests/{id} would otherwise take "5.har" for an id.
// The set is streamed: the page is read without bodies, then each capture's body is read and its
// entry written only when the client has taken the previous ones, so a page of 500 × 1 MiB holds
// about one entry in the process at a time, not the whole export (docs/webhooks.md, HAR export).
import { Readable } from 'node:stream'
import Router from '@koa/router'
import type { Context } from 'koa'
import { requireApiKey } from '../platform/http/auth.ts'
import { notFound } from '../platform/http/errors.ts'
import { input, validate } from '../platform/http/validate.ts'
import type { Platform } from '../platform/platform.ts'
import { getBody, inlineBytes } from './store/body-store.ts'
import { getCapture } from './store/capture-store.ts'
import { harEntry, harLog, harLogStream } from './search/har.ts'
import { publicBase } from './store/present.ts'
import { listRequestsSchema, requestSchema } from './endpoint-schema.ts'
import { findCaptures } from './search/capture-search.ts'
import { ownEndpoint } from './own-endpoint.ts'
import { untrusted } from './untrusted-response.ts'

/** Bytes the response stream buffers before it waits for the client. */
const STREAM_CHUNK = 64 * 1024
/** Captures read at once while collecting the page's ids. */
const ID_BATCH = 16

export function harRouter(platform: Platform): Router {
  const { db, config } = platform
  const router = new Router({ prefix: '/api/v1' })
  const auth = requireApiKey(platform, 'webhooks')

  function answer(ctx: Context, har: unknown, name: string) {
    ctx.set('Content-Disposition', `attachment; filename="${name}.har"`)
    ctx.type = 'application/json; charset=utf-8'
    ctx.body = har
  }

  router.get('/endpoints/:token/requests.har', auth, untrusted, validate(listRequestsSchema), async (ctx) => {
    const { params, query } = input(ctx, listRequestsSchema)
    const ep = await ownEndpoint(db, ctx, params.token)
    const base = publicBase(ctx, config)
    // The page's ids, newest first in small batches (the embedded engine ignores projections, so
    // a batch carries its bodies; a small batch keeps that bounded), then the entries oldest first.
    const ids: number[] = []
    for (let before = query.before; ids.length < query.limit; ) {
      const limit = Math.min(ID_BATCH, query.limit - ids.length)
      const batch = await findCaptures(db, ep._id, { ...query, before, limit, top: ep.seq, projection: { id: 1 } }, query)
      for (const d of batch) ids.push(d.id)
      if (batch.length < limit) break
      before = batch.at(-1)!.id
    }
    async function* entries() {
      for (const id of ids.reverse()) {
        const d = await getCapture(db, ep._id, id)
        if (!d) continue // expired or deleted since the page was read
        // Bodies stored outside the document (over 1 MiB) are left out, as in lists.
        yield harEntry(d, d.body ? inlineBytes(d.body) : d.size_bytes ? null : Buffer.alloc(0), ep, base)
      }
    }
    answer(ctx, Readable.from(harLogStream(entries()), { objectMode: false, highWaterMark: STREAM_CHUNK }), `${ep._id}-requests`)
  })

  router.get('/endpoints/:token/requests/:id.har', auth, untrusted, validate(requestSchema), async (ctx) => {
    const { params } = input(ctx, requestSchema)
    const ep = await ownEndpoint(db, ctx, params.token)
    const cap = await getCapture(db, ep._id, params.id)
    if (!cap) throw notFound('Request not found')
    answer(ctx, harLog([harEntry(cap, await getBody(db, cap), ep, publicBase(ctx, config))]), `${ep._id}-request-${cap.id}`)
  })

  return router
}
