// "Why did this user get that?": POST /api/v1/projects/{id}/playground evaluates a context against
// the project's flags in every environment (or those named) in one request, answering per
// environment and flag the value, variant, reason, the index of the rule that matched and that
// rule as stored. Evaluated with the same engine the SDK endpoints use, compiled from the stored
// flags and segments (so an answer is never older than the last write), and not counted as usage.
import Router from '@koa/router'
import { z } from 'zod'
import { accountOf, requireApiKey } from '../platform/http/auth.ts'
import { HttpError, notFound } from '../platform/http/errors.ts'
import { atField, input, validate } from '../platform/http/validate.ts'
import type { Platform } from '../platform/platform.ts'
import { describedAs } from '../platform/ops/openapi.ts'
import { compileFlagSet } from './engine/flag-set.ts'
import { normalizeContext, type Evaluation } from './engine/rules.ts'
import { variantView } from './engine/variant-allocation.ts'
import { contextSchema, MAX_EVAL_FLAGS } from './sdk/evaluate-schema.ts'
import { definitionOf, listFlags, stateIn, type FlagDoc } from './store/flag-store.ts'
import { environmentNames, getProject } from './store/project-store.ts'
import { listSegments } from './store/segment-store.ts'
import { projectParams } from './flag-schema.ts'

export const MAX_PLAYGROUND_ENVIRONMENTS = 50

export const playgroundSchema = z.object({
  params: projectParams,
  body: z.strictObject({
    /** The evaluation context, as POST /api/v1/evaluate takes it ({} for none). */
    context: contextSchema,
    /** Flag keys to evaluate; absent: every flag of the project. */
    flags: z.array(z.string().max(128)).min(1).max(MAX_EVAL_FLAGS).optional(),
    /** Environment names; absent: every environment of the project. */
    environments: z.array(z.string().max(64)).min(1).max(MAX_PLAYGROUND_ENVIRONMENTS).optional(),
  }),
})

const resultSchema = {
  type: 'object',
  properties: {
    value: {},
    variant: { type: ['string', 'null'] },
    reason: { type: 'string', enum: ['TARGETING_MATCH', 'DEFAULT', 'DISABLED', 'FLAG_NOT_FOUND'] },
    rule_index: { type: ['integer', 'null'] },
    rule: { type: ['object', 'null'], description: 'The rule that matched, as stored (variants without their buckets).' },
    error: { type: 'string', description: 'FLAG_NOT_FOUND for a key the project does not have.' },
  },
  required: ['value', 'variant', 'reason', 'rule_index', 'rule'],
}

const OPENAPI = describedAs({
  summary: 'Evaluate a context against the flags in every environment, with the rule that matched',
  responses: {
    '200': {
      description: 'Per environment, per flag: the result and the matching rule.',
      content: {
        'application/json': {
          schema: {
            type: 'object',
            properties: { environments: { type: 'object', additionalProperties: { type: 'object', additionalProperties: resultSchema } } },
            required: ['environments'],
          },
        },
      },
    },
  },
})

function resultOf(f: FlagDoc | undefined, environment: string, r: Evaluation) {
  const rule = f && r.rule_index !== null ? stateIn(f, environment).rules[r.rule_index] : undefined
  return {
    value: r.value,
    variant: r.variant ?? null,
    reason: r.reason,
    rule_index: r.rule_index,
    rule: rule ? (rule.variants ? { ...rule, variants: rule.variants.map(variantView) } : rule) : null,
  }
}

export function playgroundRouter(platform: Platform): Router {
  const router = new Router({ prefix: '/api/v1/projects/:id' })
  const db = platform.db
  const auth = requireApiKey(platform, 'flags')

  router.post('/playground', OPENAPI, auth, validate(playgroundSchema), async (ctx) => {
    const { params, body } = input(ctx, playgroundSchema)
    const p = await getProject(db, accountOf(ctx)._id, params.id)
    if (!p) throw notFound('Project not found')
    const known = environmentNames(p)
    const envs = body.environments ? [...new Set(body.environments)] : known
    for (const [i, e] of envs.entries()) {
      if (!known.includes(e)) throw new HttpError(404, `Environment not found: environments[${i}] ("${e}") is not an environment of this project`, {}, { environment: e })
    }
    const [docs, segs] = await Promise.all([listFlags(db, p._id), listSegments(db, p._id)])
    const byKey = new Map(docs.map((f) => [f.key, f]))
    const keys = body.flags ? [...new Set(body.flags)] : docs.map((f) => f.key)
    const wanted = keys.map((k) => byKey.get(k)).filter((f): f is FlagDoc => f !== undefined)
    const context = normalizeContext(body.context)
    const segments = segs.map((s) => ({ name: s.name, conditions: s.conditions }))
    // Null prototypes: a flag may be keyed "__proto__".
    const out: Record<string, Record<string, unknown>> = Object.create(null)
    for (const env of envs) {
      const set = compileFlagSet(wanted.map((f) => definitionOf(f, env)), segments)
      const answers: Record<string, unknown> = Object.create(null)
      for (const key of keys) {
        const compiled = set.byKey.get(key)
        answers[key] = compiled
          ? resultOf(byKey.get(key), env, compiled.evaluate(context))
          : { value: null, variant: null, reason: 'FLAG_NOT_FOUND', rule_index: null, rule: null, error: 'FLAG_NOT_FOUND' }
      }
      out[env] = answers
    }
    ctx.body = { environments: out }
  })

  return router
}
