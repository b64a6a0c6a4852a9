// The evaluation API: POST /api/v1/evaluate (several flags, with context) and
// GET /api/v1/evaluate/{flag_key}?sdk_key= (one flag, no context). Served from the in-memory
// flag cache: no database read once a project is cached.
import Router from '@koa/router'
import type { Context } from 'koa'
import { notFound } from '../platform/http/errors.ts'
import { input, parseOrThrow, validate, withSchema } from '../platform/http/validate.ts'
import type { FlagCache, ProjectSnapshot } from './flag-cache.ts'
import { EMPTY_CONTEXT, normalizeContext, NOT_FOUND, type Evaluation } from './rules.ts'
import type { Admit } from './sdk-auth.ts'
import { recordEvaluation, recordEvaluations } from './evaluation-metrics.ts'
import { checkEvaluateBody, evaluateBodySchema, evaluateOneSchema, evaluateSchema } from './evaluate-schema.ts'

export const FLAG_NOT_FOUND_MESSAGE = 'Flag not found'

/** A project deleted between key lookup and load serves nothing, like an empty project. */
export const EMPTY_SNAPSHOT: ProjectSnapshot = { projectId: '', version: -1, byKey: new Map(), all: [] }

// Results are shared frozen objects (compileFlag), so their JSON is computed once.
const resultJson = new WeakMap<Evaluation, string>()
function evaluationJson(r: Evaluation): string {
  let s = resultJson.get(r)
  if (s === undefined) resultJson.set(r, (s = JSON.stringify({ value: r.value, reason: r.reason, rule_index: r.rule_index })))
  return s
}

/**
 * POST /api/v1/evaluate with its JSON body in ctx.request.body. The body is checked by hand
 * (checkEvaluateBody accepts exactly what the schema accepts; anything else gets the schema's own
 * error message). Shared by the route and the fast path.
 */
export function evaluateHandler(cache: FlagCache, admit: Admit): (ctx: Context) => Promise<void> {
  return async (ctx) => {
    // Authenticate before validating, so that a caller without a key learns nothing else.
    const raw = ctx.request.body as { sdk_key?: unknown } | undefined
    const sdk = await admit(raw && typeof raw === 'object' ? raw.sdk_key : undefined)
    const body = checkEvaluateBody(raw) ?? parseOrThrow(evaluateBodySchema, raw ?? {})
    const snap = (await cache.snapshot(sdk.projectId)) ?? EMPTY_SNAPSHOT
    const context = body.context ? normalizeContext(body.context) : EMPTY_CONTEXT
    // The answer is written by hand from each result's memoised JSON: on a request of ten flags,
    // building and stringifying a fresh object cost as much as evaluating.
    const results: Evaluation[] = []
    let json = '{"flags":{'
    const keys = body.flags ?? snap.all.map((f) => f.key)
    // A key asked for twice is answered once, as an object would hold it.
    const seen = keys.length > 1 ? new Set<string>() : undefined
    for (const key of keys) {
      if (seen) {
        if (seen.has(key)) continue
        seen.add(key)
      }
      const r = snap.byKey.get(key)?.evaluate(context) ?? NOT_FOUND
      json += `${results.length ? ',' : ''}${JSON.stringify(key)}:${evaluationJson(r)}`
      results.push(r)
    }
    recordEvaluations(results)
    ctx.set('Content-Type', 'application/json; charset=utf-8')
    ctx.body = `${json}}}`
  }
}

export function evaluateRouter(cache: FlagCache, admit: Admit): Router {
  const router = new Router({ prefix: '/api/v1' })

  // Bodies the fast path (evaluate-fast-path.ts) leaves to the general stack arrive here:
  // compressed ones, and any other media type (which requireJson has answered 415 by then).
  router.post('/evaluate', withSchema(evaluateHandler(cache, admit), evaluateSchema))

  router.get('/evaluate/:flag_key', validate(evaluateOneSchema), async (ctx) => {
    const { params, query } = input(ctx, evaluateOneSchema)
    const sdk = await admit(query.sdk_key)
    const snap = (await cache.snapshot(sdk.projectId)) ?? EMPTY_SNAPSHOT
    const f = snap.byKey.get(params.flag_key)
    if (!f) {
      recordEvaluation('FLAG_NOT_FOUND')
      throw notFound(FLAG_NOT_FOUND_MESSAGE)
    }
    const r = f.evaluate(EMPTY_CONTEXT)
    recordEvaluation(r.reason)
    ctx.body = { key: f.key, value: r.value, reason: r.reason, rule_index: r.rule_index }
  })

  return router
}
