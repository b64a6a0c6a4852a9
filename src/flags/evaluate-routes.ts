// The evaluation API: POST /api/v1/evaluate (several flags, with context) and
// GET /api/v1/evaluate/{flag_key}?sdk_key= (one flag, no context). Served from the in-memory
// flag cache: no database read once a project is cached.
import Router from '@koa/router'
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

export function evaluateRouter(cache: FlagCache, admit: Admit): Router {
  const router = new Router({ prefix: '/api/v1' })

  // The hot path: one middleware, the body checked by hand (checkEvaluateBody accepts exactly what
  // the schema accepts; anything else gets the schema's own error message).
  router.post(
    '/evaluate',
    withSchema(async (ctx) => {
      // Authenticate before validating, so that a caller without a key learns nothing else.
      const raw = ctx.request.body as { sdk_key?: unknown } | undefined
      const sdk = await admit(raw && typeof raw === 'object' ? raw.sdk_key : undefined)
      const body = checkEvaluateBody(raw) ?? parseOrThrow(evaluateBodySchema, raw ?? {})
      const snap = (await cache.snapshot(sdk.projectId)) ?? EMPTY_SNAPSHOT
      const context = body.context ? normalizeContext(body.context) : EMPTY_CONTEXT
      // Null prototype: "__proto__" is a valid flag key.
      const flags: Record<string, Evaluation> = Object.create(null)
      if (body.flags) {
        for (const key of body.flags) {
          const f = snap.byKey.get(key)
          flags[key] = f ? f.evaluate(context) : NOT_FOUND
        }
      } else {
        for (const f of snap.all) flags[f.key] = f.evaluate(context)
      }
      recordEvaluations(Object.values(flags))
      ctx.body = { flags }
    }, evaluateSchema),
  )

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
