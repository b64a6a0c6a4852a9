// Forwarding controls of an endpoint (paid plans, endpoints with a forward_url):
// POST …/{token}/forwarding/pause | resume, and bulk recovery of dead-lettered forwards:
// POST …/{token}/recoveries {since} → 202 with the recovery, GET …/{token}/recoveries/{id} its progress.
import Router from '@koa/router'
import type { Context } from 'koa'
import { WEBHOOKS_LIMITS } from '../platform/plans.ts'
import { accountOf, requireApiKey } from '../platform/http/auth.ts'
import { conflict, forbidden, notFound } from '../platform/http/errors.ts'
import { input, validate } from '../platform/http/validate.ts'
import type { Platform } from '../platform/platform.ts'
import { findOwnEndpoint, type EndpointDoc } from './store/endpoint-store.ts'
import { setForwardPaused } from './forward/forward-pause.ts'
import { forwardingSchema, recoverSchema, recoveryStatusSchema } from './forwarding-schema.ts'
import { presentRecovery, recoveries, startRecovery } from './forward/dead-letter-recovery.ts'
import { ownEndpoint } from './own-endpoint.ts'

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
      ctx.body = { endpoint_id: ep._id, forward_paused: paused }
    })
  }

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
