// HAR 1.2 export: GET …/{token}/requests.har (the same filters and paging as …/requests, oldest
// first as HAR viewers expect; bodies over 1 MiB left out as in lists) and GET …/{token}/requests/{id}.har (one capture). Mounted ahead
// of routes.ts, whose …/requests/{id} would otherwise take "5.har" for an id.
import Router from '@koa/router'
import type { Context } from 'koa'
import { accountOf, requireApiKey } from '../platform/http/auth.ts'
import { notFound } from '../platform/http/errors.ts'
import { input, validate } from '../platform/http/validate.ts'
import type { Platform } from '../platform/platform.ts'
import { getBody, inlineBytes } from './body-store.ts'
import { getCapture } from './captures.ts'
import { findOwnEndpoint, isExpired, type EndpointDoc } from './endpoints.ts'
import { harEntry, harLog } from './har.ts'
import { publicBase } from './present.ts'
import { listRequestsSchema, requestSchema } from './schema.ts'
import { findCaptures } from './capture-search.ts'
import { untrusted } from './untrusted-response.ts'

export function harRouter(platform: Platform): Router {
  const { db, config } = platform
  const router = new Router({ prefix: '/api/v1' })
  const auth = requireApiKey(platform, 'webhooks')

  async function ownEndpoint(ctx: Context, token: string): Promise<EndpointDoc> {
    const account = accountOf(ctx)
    const ep = await findOwnEndpoint(db, account._id, token)
    if (!ep || isExpired(ep, account)) throw notFound('Endpoint not found')
    return ep
  }

  function answer(ctx: Context, har: unknown, name: string) {
    ctx.set('Content-Disposition', `attachment; filename="${name}.har"`)
    ctx.type = 'application/json; charset=utf-8'
    ctx.body = har
  }

  router.get('/endpoints/:token/requests.har', auth, untrusted, validate(listRequestsSchema), async (ctx) => {
    const { params, query } = input(ctx, listRequestsSchema)
    const ep = await ownEndpoint(ctx, params.token)
    const docs = await findCaptures(db, ep._id, { ...query, top: ep.seq }, query)
    const base = publicBase(ctx, config)
    const entries = []
    // Bodies stored outside the document (over 1 MiB) are left out, as in lists: a set stays bounded.
    for (const d of docs.reverse()) entries.push(harEntry(d, d.body ? inlineBytes(d.body) : d.size_bytes ? null : Buffer.alloc(0), ep, base))
    answer(ctx, harLog(entries), `${ep._id}-requests`)
  })

  router.get('/endpoints/:token/requests/:id.har', auth, untrusted, validate(requestSchema), async (ctx) => {
    const { params } = input(ctx, requestSchema)
    const ep = await ownEndpoint(ctx, params.token)
    const cap = await getCapture(db, ep._id, params.id)
    if (!cap) throw notFound('Request not found')
    answer(ctx, harLog([harEntry(cap, await getBody(db, cap), ep, publicBase(ctx, config))]), `${ep._id}-request-${cap.id}`)
  })

  return router
}
