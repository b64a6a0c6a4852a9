// OpenFeature Remote Evaluation Protocol: POST /ofrep/v1/evaluate/flags/{key} (single flag) and
// POST /ofrep/v1/evaluate/flags (every flag of the project, with ETag / If-None-Match → 304).
// Authenticated with the project's SDK key as a Bearer token (or X-API-Key, as the spec allows).
// Both the bulk answer and the configuration advertise the change stream (`eventStreams`, ADR-0008).
import Router from '@koa/router'
import type { Context } from 'koa'
import { createHash } from 'node:crypto'
import { EMPTY_SNAPSHOT } from './evaluate-routes.ts'
import { corsByProject } from './evaluation-cors.ts'
import { metrics } from '../../platform/ops/metrics.ts'
import type { FlagCache } from './flag-cache.ts'
import { readJson } from './ofrep-body.ts'
import { contextOf, ofrepResult, type OfrepFailure } from './ofrep-schema.ts'
import { countServed } from './usage-counter.ts'
import { normalizeContext } from '../engine/rules.ts'
import { sdkKeyOf, type Admit } from './sdk-auth.ts'
import { answerTagged } from './tagged-answer.ts'
import { eventStreamsFor } from './stream-advert.ts'
import type { Config } from '../../platform/config.ts'

function fail(ctx: Context, status: number, body: OfrepFailure): void {
  ctx.status = status
  ctx.body = body
}

export function ofrepRouter(cache: FlagCache, admit: Admit, config: Pick<Config, 'FLAGS_PUBLIC_URL'>): Router {
  const router = new Router({ prefix: '/ofrep/v1' })

  // Each route loads the project right after authenticating: its allowed origins decide, for
  // everything answered from then on, which browser pages may read the answer.
  // A re-fetch an event stream triggered names the flag set's tag it was told of
  // (`flagConfigEtag`): a replica that has not heard of that change yet reads the flags again.
  const projectOf = async (ctx: Context) => {
    const sdk = await admit(sdkKeyOf(ctx), { 'WWW-Authenticate': 'Bearer' })
    let snap = (await cache.snapshot(sdk.projectId)) ?? EMPTY_SNAPSHOT
    const told = ctx.query.flagConfigEtag
    if (typeof told === 'string' && told !== '' && told !== snap.tag && snap !== EMPTY_SNAPSHOT) snap = (await cache.reload(sdk.projectId)) ?? EMPTY_SNAPSHOT
    corsByProject(ctx, snap.origins)
    return snap
  }

  router.post('/evaluate/flags/:key', async (ctx) => {
    const key = ctx.params.key!
    const snap = await projectOf(ctx)
    const body = await readJson(ctx)
    if (!body.ok) return fail(ctx, 400, { key, errorCode: 'PARSE_ERROR', errorDetails: body.details })
    const c = contextOf(body.value)
    if (!c.ok) return fail(ctx, 400, { key, errorCode: 'INVALID_CONTEXT', errorDetails: c.details })
    const f = snap.byKey.get(key)
    if (!f) {
      metrics.evaluation('FLAG_NOT_FOUND')
      return fail(ctx, 404, { key, errorCode: 'FLAG_NOT_FOUND', errorDetails: `Flag "${key}" not found` })
    }
    const r = f.evaluate(normalizeContext(c.context))
    const result = ofrepResult(f.key, r, f.definition.type !== undefined)
    metrics.evaluation(result.reason)
    countServed(snap.projectId, snap.environment, f.key, r)
    ctx.body = result
  })

  router.post('/evaluate/flags', async (ctx) => {
    const snap = await projectOf(ctx)
    const body = await readJson(ctx)
    if (!body.ok) return fail(ctx, 400, { errorCode: 'PARSE_ERROR', errorDetails: body.details })
    const c = contextOf(body.value)
    if (!c.ok) return fail(ctx, 400, { errorCode: 'INVALID_CONTEXT', errorDetails: c.details })
    const context = normalizeContext(c.context)
    const results = snap.all.map((f) => {
      const r = f.evaluate(context)
      countServed(snap.projectId, snap.environment, f.key, r)
      return ofrepResult(f.key, r, f.definition.type !== undefined)
    })
    for (const r of results) metrics.evaluation(r.reason)
    const json = JSON.stringify({ flags: results, eventStreams: eventStreamsFor(sdkKeyOf(ctx)!, config) })
    // The tag is the hash of exactly what would be sent: it changes when flags or context do.
    const etag = `"${createHash('sha256').update(json).digest('base64url').slice(0, 32)}"`
    answerTagged(ctx, etag, 'no-cache', json)
  })

  router.get('/configuration', async (ctx) => {
    await projectOf(ctx)
    ctx.body = {
      name: 'queueworks-flags',
      capabilities: {
        cacheInvalidation: { polling: { enabled: true, minPollingIntervalMs: 1_000 }, eventStreams: eventStreamsFor(sdkKeyOf(ctx)!, config) },
        flagEvaluation: { supportedTypes: ['boolean', 'string', 'number', 'object'] },
      },
    }
  })

  return router
}
