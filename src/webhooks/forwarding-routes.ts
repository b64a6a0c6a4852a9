// Forwarding controls of an endpoint (paid plans, endpoints with a forward_url):
// POST …/{token}/forwarding/pause | resume (the new state published to the endpoint's live streams),
// and bulk recovery of dead-lettered forwards: POST …/{token}/recoveries {since} → 202 with the recovery, GET …/{token}/recoveries/{id} its progress,
// and GET …/{token}/deliveries: the forwarded requests with their attempts (the console's deliveries view).
import Router from '@koa/router'
import type { Context } from 'koa'
import { WEBHOOKS_LIMITS } from '../platform/plans.ts'
import { accountOf, requireApiKey } from '../platform/http/auth.ts'
import { conflict, forbidden, notFound } from '../platform/http/errors.ts'
import { input, validate } from '../platform/http/validate.ts'
import type { Platform } from '../platform/platform.ts'
import { endpoints, findOwnEndpoint, type EndpointDoc } from './store/endpoint-store.ts'
import { publishSettings } from './endpoint-view.ts'
import { setForwardPaused } from './forward/forward-pause.ts'
import { forwardingSchema, listDeliveriesSchema, recoverSchema, recoveryStatusSchema } from './forwarding-schema.ts'
import { describedAs } from '../platform/ops/openapi.ts'
import { attemptsOf, listCaptures } from './store/capture-store.ts'
import { presentAttempt, presentForward } from './store/present.ts'
import { wireTime } from './store/time.ts'
import { presentRecovery, recoveries, startRecovery } from './forward/dead-letter-recovery.ts'
import { ownEndpoint } from './own-endpoint.ts'

const DELIVERIES_OPENAPI = {
  summary: "An endpoint's forwards and their attempts, newest first",
  description:
    'One item per forwarded request: its forward state and every attempt (status, latency, error). `status=failed` lists those whose last attempt failed (retrying or dead-lettered), `status=dead` the dead-lettered ones. Pages by request id: `next_before` of one page is the `before` of the next.',
}

export function forwardingRouter(platform: Platform): Router {
  const { db } = platform
  const router = new Router({ prefix: '/api/v1' })
  const auth = requireApiKey(platform, 'webhooks')

  async function forwardingEndpoint(ctx: Context, token: string): Promise<EndpointDoc> {
    const ep = await ownEndpoint(db, ctx, token)
    const account = accountOf(ctx)
    if (!WEBHOOKS_LIMITS[account.plan].forwarding) {
      throw forbidden(`Forwarding is not available on the ${account.plan} plan. Upgrade to a paid plan (starter, pro or business) to use it.`)
    }
    if (!ep.forward_url) throw conflict('This endpoint has no forward_url')
    return ep
  }

  for (const [action, paused] of [['pause', true], ['resume', false]] as const) {
    router.post(`/endpoints/:token/forwarding/${action}`, auth, validate(forwardingSchema), async (ctx) => {
      const { params } = input(ctx, forwardingSchema)
      const ep = await forwardingEndpoint(ctx, params.token)
      // Resuming an endpoint that is not paused still sends anything held (harmless when none is).
      await setForwardPaused(platform, ep._id, paused)
      // Every page open on the endpoint shows the new state (endpoint-view.ts); gone meanwhile: nothing to show.
      const after = await endpoints(db).findOne({ _id: ep._id })
      if (after) await publishSettings(platform, ctx, after)
      ctx.body = { endpoint_id: ep._id, forward_paused: paused }
    })
  }

  // Every forwarded request of the endpoint with its attempts, newest first; bodies are left out
  // (GET …/requests/{id} has them). Not limited to paid plans: what was forwarded stays readable.
  router.get('/endpoints/:token/deliveries', describedAs(DELIVERIES_OPENAPI), auth, validate(listDeliveriesSchema), async (ctx) => {
    const { params, query } = input(ctx, listDeliveriesSchema)
    const ep = await ownEndpoint(db, ctx, params.token)
    const status = query.status === 'failed' ? { $in: ['retrying', 'dead'] } : query.status
    const docs = await listCaptures(db, ep._id, { limit: query.limit + 1, before: query.before, top: ep.seq }, status ? { 'forward.status': status } : { forward: { $exists: true } })
    const page = docs.slice(0, query.limit)
    const tries = await attemptsOf(db, ep._id, page.map((d) => d.id))
    ctx.set('Cache-Control', 'no-store')
    ctx.body = {
      deliveries: page.map((d) => ({
        id: d.id,
        method: d.method,
        path: d.path,
        received_at: wireTime(d.received_at),
        size_bytes: d.size_bytes,
        forward: presentForward(d.forward!),
        attempts: (tries.get(d.id) ?? []).map((a) => presentAttempt(a)),
      })),
      next_before: docs.length > query.limit ? page.at(-1)!.id : null,
    }
  })

  router.post('/endpoints/:token/recoveries', auth, validate(recoverSchema), async (ctx) => {
    const { params, body } = input(ctx, recoverSchema)
    const ep = await forwardingEndpoint(ctx, params.token)
    const { doc, created } = await startRecovery(platform, ep._id, body.since)
    ctx.status = created ? 202 : 200
    ctx.body = { ...presentRecovery(doc), status_url: `/api/v1/endpoints/${ep._id}/recoveries/${doc._id}` }
  })

  router.get('/endpoints/:token/recoveries/:id', auth, validate(recoveryStatusSchema), async (ctx) => {
    const { params } = input(ctx, recoveryStatusSchema)
    const account = accountOf(ctx)
    const ep = await findOwnEndpoint(db, account._id, params.token)
    const rec = ep ? await recoveries(db).findOne({ _id: params.id, endpoint_id: ep._id }) : null
    if (!rec) throw notFound('Recovery not found')
    ctx.body = presentRecovery(rec)
  })

  return router
}
