// One endpoint as GET …/endpoints/{token} answers it, and its settings published on its live stream:
// every change of an endpoint (PATCH, forwarding pause / resume) sends the endpoint as GET would
// answer it right after (`endpoint` event), its deletion an `endpoint_deleted` event, to the streams
// open on any replica (live-hub.ts; docs/webhooks-tools.md, "Live stream").
import type { Context } from 'koa'
import { clock } from '../platform/clock.ts'
import { accountOf } from '../platform/http/auth.ts'
import type { Platform } from '../platform/platform.ts'
import { forwardSchedule } from './forward/forward-schedule.ts'
import { publishLive } from './live/live-hub.ts'
import { countByEndpoint } from './store/capture-store.ts'
import type { EndpointDoc } from './store/endpoint-store.ts'
import { forwardStatsOf } from './store/forward-stats.ts'
import { presentEndpoint, presentOverview, publicBase } from './store/present.ts'

/** One endpoint as GET …/endpoints/{token} answers it (PATCH answers the same). */
export async function presentOne(platform: Platform, ctx: Context, ep: EndpointDoc) {
  const { db, config } = platform
  const [counts, stats] = await Promise.all([countByEndpoint(db, [ep]), forwardStatsOf(db, [ep._id])])
  return {
    ...presentEndpoint(ep, accountOf(ctx), publicBase(ctx, config), counts.get(ep._id) ?? 0),
    ...presentOverview(ep, stats.get(ep._id), clock.now()),
    // The retry schedule its forwards follow (the operator's, the same for every endpoint): the console shows it.
    forward_schedule_ms: ep.forward_url ? forwardSchedule(config) : null,
  }
}

export type EndpointView = Awaited<ReturnType<typeof presentOne>>

/**
 * Tells the endpoint's open streams its settings as the change left them (`ep` read back after
 * it), and answers the same view. Published before the change answers, so a client whose change
 * returned can count on its other pages having been sent the event. A Redis outage loses only this
 * wake-up (pages show the state on their next load, as after any reconnect).
 */
export async function publishSettings(platform: Platform, ctx: Context, ep: EndpointDoc): Promise<EndpointView> {
  const view = await presentOne(platform, ctx, ep)
  await publishLive(platform, ep._id, { type: 'endpoint', data: view })
  return view
}

/** The endpoint is gone: every stream of it gets `endpoint_deleted`, then ends. */
export async function publishDeleted(platform: Platform, token: string, requestsDeleted: number): Promise<void> {
  await publishLive(platform, token, { type: 'endpoint_deleted', data: { endpoint_id: token, deleted: true, requests_deleted: requestsDeleted } })
}
