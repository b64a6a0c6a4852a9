// The webhook-capture management API (docs/webhooks.md, "Endpoints") under /api/v1: signup,
// endpoints (create, list, read, change settings, delete), captured requests (list, read, raw body,
// delete), replay, manual forward retry and signature verification.
import Router from '@koa/router'
import type { Context } from 'koa'
import { scheduleForward } from './forward/forward-schedule.ts'
import { createAccount, signupSchema, type Account } from '../platform/accounts.ts'
import { WEBHOOKS_LIMITS } from '../platform/plans.ts'
import { clock } from '../platform/clock.ts'
import { accountOf, requireApiKey } from '../platform/http/auth.ts'
import { conflict, forbidden, notFound } from '../platform/http/errors.ts'
import { input, validate } from '../platform/http/validate.ts'
import { describedAs } from '../platform/ops/openapi.ts'
import { randomId } from '../platform/ids.ts'
import type { Platform } from '../platform/platform.ts'
import { checkOutboundUrl } from '../platform/outbound/outbound-url.ts'
import { getBody } from './store/body-store.ts'
import { captureCollection, countByEndpoint, deleteCaptures, deleteEndpointCaptures, getCapture, listAttempts } from './store/capture-store.ts'
import { DEFAULT_RESPONSE, endpoints, findOwnEndpoint, isExpired, type EndpointDoc } from './store/endpoint-store.ts'
import { presentOne, publishDeleted, publishSettings } from './endpoint-view.ts'
import { releaseEndpointSlot, takeEndpointSlot, usedToday } from './store/limit-store.ts'
import { presentAttempt, presentCapture, presentEndpoint, presentOverview, publicBase } from './store/present.ts'
import { recoveries } from './forward/dead-letter-recovery.ts'
import { deadLetterOwed } from './forward/forward-stop.ts'
import { countDead, deleteForwardStats, forwardStatsOf } from './store/forward-stats.ts'
import { replayNow } from './replay/replay.ts'
import { findCaptures } from './search/capture-search.ts'
import { createEndpointSchema, endpointSchema, updateEndpointSchema, listRequestsSchema, replaySchema, requestSchema, verifySchema } from './endpoint-schema.ts'
import { ENDPOINT_NOT_FOUND, ownEndpoint } from './own-endpoint.ts'
import { untrusted } from './untrusted-response.ts'
import { verifySignature } from './signatures/index.ts'

export const SAVE_KEY_MESSAGE = 'Save your API key now: it is shown only once and cannot be recovered.'
export const paidOnly = (feature: string, plan: string) =>
  `${feature} is not available on the ${plan} plan. Upgrade to a paid plan (starter, pro or business) to use it.`
const REQUEST_NOT_FOUND = 'Request not found'

const UPDATE_OPENAPI = {
  summary: "Change an endpoint's settings; its capture URL stays the same",
  description:
    'Any of the fields of create, at least one; the others keep their values. Checked as create checks them: forward_url must be a public http(s) URL and needs a paid plan; null stops forwarding. Every capture and forward attempt reads the endpoint as it is then: the next capture is answered with the new response, and the next attempt of a forward already owed goes to the new forward_url. Removing forward_url dead-letters the forwards still owed (pending, retrying, held while paused) with a reason, for a later retry or recovery. Answers the endpoint as GET does, and sends the same to its open live streams (an `endpoint` event).',
}

function limitsOf(account: Pick<Account, 'plan'>) {
  const l = WEBHOOKS_LIMITS[account.plan]
  return { endpoints: l.endpoints, requests_per_day: l.requests_per_day, retention_hours: l.retention_hours }
}

export function endpointsRouter(platform: Platform): Router {
  const { db, config } = platform
  const router = new Router({ prefix: '/api/v1' })
  const auth = requireApiKey(platform, 'webhooks')

  async function ownCapture(ctx: Context, token: string, id: number) {
    const ep = await ownEndpoint(db, ctx, token)
    const cap = await getCapture(db, ep._id, id)
    if (!cap) throw notFound(REQUEST_NOT_FOUND)
    return { ep, cap }
  }

  function requirePaid(account: Account, feature: string) {
    if (!WEBHOOKS_LIMITS[account.plan].forwarding) throw forbidden(paidOnly(feature, account.plan))
  }

  router.post('/signup', validate(signupSchema), async (ctx) => {
    const { body } = input(ctx, signupSchema)
    const { account, apiKey } = await createAccount(db, 'webhooks', body.email)
    ctx.status = 201
    ctx.body = { api_key: apiKey, plan: account.plan, limits: limitsOf(account), message: SAVE_KEY_MESSAGE }
  })

  router.get('/account', auth, async (ctx) => {
    const account = accountOf(ctx)
    const count = await endpoints(db).countDocuments({ account_id: account._id })
    ctx.body = { plan: account.plan, limits: limitsOf(account), usage: { endpoints: count, requests_today: await usedToday(db, account._id, clock.now()) } }
  })

  router.post('/endpoints', auth, validate(createEndpointSchema), async (ctx) => {
    const account = accountOf(ctx)
    const { body } = input(ctx, createEndpointSchema)
    const limits = WEBHOOKS_LIMITS[account.plan]
    if (body.forward_url) requirePaid(account, 'Forwarding (forward_url)')
    const forwardUrl = body.forward_url ? checkOutboundUrl('forward_url', body.forward_url, config.outboundAllowPrivate) : null
    if (!(await takeEndpointSlot(db, account._id, limits.endpoints))) {
      throw forbidden(`Endpoint limit reached: the ${account.plan} plan allows ${limits.endpoints} endpoints. Delete one or upgrade your plan.`)
    }
    const now = clock.now()
    const ep: EndpointDoc = {
      _id: randomId(),
      account_id: account._id,
      name: body.name ?? null,
      response_code: body.response_code ?? DEFAULT_RESPONSE.code,
      response_body: body.response_body ?? DEFAULT_RESPONSE.body,
      response_content_type: body.response_content_type ?? DEFAULT_RESPONSE.contentType,
      forward_url: forwardUrl,
      created_at: now,
      expires_at: limits.endpoint_lifetime_days === null ? null : new Date(now.getTime() + limits.endpoint_lifetime_days * 86_400_000),
      seq: 0,
    }
    try {
      await endpoints(db).insertOne(ep)
    } catch (err) {
      await releaseEndpointSlot(db, account._id)
      throw err
    }
    ctx.status = 201
    ctx.body = presentEndpoint(ep, account, publicBase(ctx, config))
  })

  router.get('/endpoints', auth, async (ctx) => {
    const account = accountOf(ctx)
    const now = clock.now()
    const all = (await endpoints(db).find({ account_id: account._id }).sort({ created_at: 1 }).toArray()).filter((e) => !isExpired(e, account, now))
    const [counts, stats] = await Promise.all([countByEndpoint(db, all), forwardStatsOf(db, all.map((e) => e._id))])
    const base = publicBase(ctx, config)
    ctx.body = { endpoints: all.map((e) => ({ ...presentEndpoint(e, account, base, counts.get(e._id) ?? 0), ...presentOverview(e, stats.get(e._id), now) })) }
  })

  router.get('/endpoints/:token', auth, validate(endpointSchema), async (ctx) => {
    const { params } = input(ctx, endpointSchema)
    ctx.body = await presentOne(platform, ctx, await ownEndpoint(db, ctx, params.token))
  })

  router.patch('/endpoints/:token', describedAs(UPDATE_OPENAPI), auth, validate(updateEndpointSchema), async (ctx) => {
    const account = accountOf(ctx)
    const { params, body } = input(ctx, updateEndpointSchema)
    const ep = await ownEndpoint(db, ctx, params.token)
    // The checks of create, in its order; clearing forward_url is allowed on every plan.
    if (body.forward_url) requirePaid(account, 'Forwarding (forward_url)')
    const set: Partial<EndpointDoc> = {}
    if (body.name !== undefined) set.name = body.name
    if (body.response_code !== undefined) set.response_code = body.response_code
    if (body.response_body !== undefined) set.response_body = body.response_body
    if (body.response_content_type !== undefined) set.response_content_type = body.response_content_type
    if (body.forward_url !== undefined) set.forward_url = body.forward_url ? checkOutboundUrl('forward_url', body.forward_url, config.outboundAllowPrivate) : null
    const after = await endpoints(db).findOneAndUpdate({ _id: ep._id, account_id: account._id }, { $set: set }, { returnDocument: 'after' })
    if (!after) throw notFound(ENDPOINT_NOT_FOUND)
    // Stopped: the forwards still owed are dead-lettered with the reason (forward-stop.ts).
    if (ep.forward_url && !after.forward_url) await deadLetterOwed(platform, after)
    // Every page open on the endpoint (any replica) shows the new settings (endpoint-view.ts).
    ctx.body = await publishSettings(platform, ctx, after)
  })

  router.delete('/endpoints/:token', auth, validate(endpointSchema), async (ctx) => {
    const account = accountOf(ctx)
    const { params } = input(ctx, endpointSchema)
    const ep = await findOwnEndpoint(db, account._id, params.token)
    if (!ep) throw notFound(ENDPOINT_NOT_FOUND)
    const r = await endpoints(db).deleteOne({ _id: ep._id, account_id: account._id })
    if (r.deletedCount === 0) throw notFound(ENDPOINT_NOT_FOUND)
    await releaseEndpointSlot(db, account._id)
    const removed = await deleteEndpointCaptures(db, ep)
    await recoveries(db).deleteMany({ endpoint_id: ep._id })
    await deleteForwardStats(db, ep._id)
    // Its open streams say so and end (live-routes.ts).
    await publishDeleted(platform, ep._id, removed)
    ctx.body = { deleted: true, endpoint_id: ep._id, requests_deleted: removed }
  })

  router.get('/endpoints/:token/requests', auth, untrusted, validate(listRequestsSchema), async (ctx) => {
    const { params, query } = input(ctx, listRequestsSchema)
    const ep = await ownEndpoint(db, ctx, params.token)
    const docs = await findCaptures(db, ep._id, { ...query, top: ep.seq }, query)
    const last = docs.at(-1)
    ctx.body = {
      requests: docs.map((d) => presentCapture(d)),
      // Older pages: pass next_before as `before`; null when this page is the last.
      next_before: docs.length === query.limit && last ? last.id : null,
    }
  })

  router.get('/endpoints/:token/requests/:id', auth, untrusted, validate(requestSchema), async (ctx) => {
    const { params } = input(ctx, requestSchema)
    const { ep, cap } = await ownCapture(ctx, params.token, params.id)
    const bytes = await getBody(db, cap)
    const tries = await listAttempts(db, ep._id, cap.id)
    ctx.body = { ...presentCapture(cap, bytes), forward_attempts: tries.map(presentAttempt) }
  })

  /** The body exactly as received, with its original content type (downloads, big bodies). */
  router.get('/endpoints/:token/requests/:id/body', auth, untrusted, validate(requestSchema), async (ctx) => {
    const { params } = input(ctx, requestSchema)
    const { cap } = await ownCapture(ctx, params.token, params.id)
    ctx.set('Content-Type', 'application/octet-stream')
    ctx.set('X-Captured-Content-Type', cap.content_type ?? '')
    ctx.set('Content-Disposition', `attachment; filename="request-${cap.id}.bin"`)
    ctx.body = await getBody(db, cap)
  })

  /** One capture with its body and forward attempts (the inspection page's Delete). */
  router.delete('/endpoints/:token/requests/:id', auth, validate(requestSchema), async (ctx) => {
    const { params } = input(ctx, requestSchema)
    const { cap } = await ownCapture(ctx, params.token, params.id)
    if ((await deleteCaptures(db, [cap])) === 0) throw notFound(REQUEST_NOT_FOUND)
    ctx.body = { deleted: true, id: cap.id }
  })

  router.post('/endpoints/:token/requests/:id/replay', auth, validate(replaySchema), async (ctx) => {
    const account = accountOf(ctx)
    const { params, body } = input(ctx, replaySchema)
    requirePaid(account, 'Replay')
    const url = checkOutboundUrl('url', body.url, config.outboundAllowPrivate)
    const { ep, cap } = await ownCapture(ctx, params.token, params.id)
    ctx.body = await replayNow(platform, { account_id: account._id, endpoint_id: ep._id, request_id: cap.id }, url)
  })

  router.post('/endpoints/:token/requests/:id/retry', auth, validate(requestSchema), async (ctx) => {
    const account = accountOf(ctx)
    const { params } = input(ctx, requestSchema)
    requirePaid(account, 'Forwarding')
    const { ep, cap } = await ownCapture(ctx, params.token, params.id)
    if (!ep.forward_url || !cap.forward) throw conflict('This request has no forward to retry: its endpoint had no forward_url when it was captured')
    if (cap.forward.status === 'pending' || cap.forward.status === 'retrying') {
      throw conflict('The forward of this request is still in progress; retry once it is delivered or dead-lettered')
    }
    const round = cap.forward.round + 1
    const r = await captureCollection(db, ep._id, cap.id).updateOne(
      { _id: cap._id, 'forward.round': cap.forward.round, 'forward.status': cap.forward.status },
      { $set: { 'forward.status': 'pending', 'forward.round': round, 'forward.next_attempt_at': null } },
    )
    if (r.modifiedCount === 0) throw conflict('The forward of this request was retried concurrently')
    if (cap.forward.status === 'dead') await countDead(db, ep._id, -1)
    await scheduleForward(platform, { endpoint_id: ep._id, request_id: cap.id, round, attempt: 1 }, 0)
    ctx.status = 202
    ctx.body = { id: cap.id, forward: { status: 'pending', round } }
  })

  router.post('/endpoints/:token/requests/:id/verify', auth, validate(verifySchema), async (ctx) => {
    const { params, body } = input(ctx, verifySchema)
    const { cap } = await ownCapture(ctx, params.token, params.id)
    // Twilio and Square sign the URL they were configured with; without one given, the capture URL
    // as this service sees it (WEBHOOKS_PUBLIC_URL or the request's host) is the best guess.
    const url = body.url ?? `${publicBase(ctx, config)}${cap.path}${cap.query ? `?${cap.query}` : ''}`
    ctx.body = verifySignature({ scheme: body.scheme, headers: cap.headers, secret: body.secret, body: await getBody(db, cap), receivedAt: cap.received_at, url })
  })

  return router
}
