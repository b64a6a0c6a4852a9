// Request schemas of the evaluation API. Context attributes are scalars (compared as strings);
// bounds keep one request cheap.
import { z } from 'zod'
import { MAX_CONTEXT_ATTRIBUTES, TOO_MANY_ATTRIBUTES } from '../engine/ofrep-result.ts'

export { MAX_CONTEXT_ATTRIBUTES }

export const MAX_EVAL_FLAGS = 1_000
export const MAX_CONTEXT_VALUE_LENGTH = 2_048

export const contextSchema = z.looseObject({}).superRefine((obj, ctx) => {
  const keys = Object.keys(obj)
  if (keys.length > MAX_CONTEXT_ATTRIBUTES) {
    ctx.addIssue({ code: 'custom', message: TOO_MANY_ATTRIBUTES })
    return
  }
  for (const k of keys) {
    const v = (obj as Record<string, unknown>)[k]
    const label = `context.${k.length > 40 ? `${k.slice(0, 40)}…` : k}`
    if (k.length === 0 || k.length > 128) ctx.addIssue({ code: 'custom', message: 'context attribute names must be 1-128 characters' })
    else if (typeof v === 'string') {
      if (v.length > MAX_CONTEXT_VALUE_LENGTH) ctx.addIssue({ code: 'custom', message: `${label} must be at most ${MAX_CONTEXT_VALUE_LENGTH} characters` })
    } else if (!(v === null || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v)))) {
      ctx.addIssue({ code: 'custom', message: `${label} must be a string, number, boolean or null` })
    }
  }
})

export const evaluateBodySchema = z.object({
  sdk_key: z.string(),
  /** Omitted: every flag of the project. */
  flags: z.array(z.string().max(128)).max(MAX_EVAL_FLAGS).optional(),
  context: contextSchema.optional(),
})

export const evaluateSchema = z.object({ body: evaluateBodySchema })

export const evaluateOneSchema = z.object({
  params: z.object({ flag_key: z.string() }),
  query: z.object({ sdk_key: z.string().optional() }),
})

export type EvaluateBody = z.infer<typeof evaluateBodySchema>

/**
 * The hot path's check of an evaluate body: accepts exactly what evaluateBodySchema accepts (a
 * differential test holds them together) without zod's copying, and returns the body itself.
 * null means "not valid": the caller then lets the schema produce its usual error message, so
 * error answers stay those of the schema.
 */
export function checkEvaluateBody(b: unknown): EvaluateBody | null {
  if (typeof b !== 'object' || b === null || Array.isArray(b)) return null
  const body = b as Record<string, unknown>
  if (typeof body.sdk_key !== 'string') return null
  const flags = body.flags
  if (flags !== undefined) {
    if (!Array.isArray(flags) || flags.length > MAX_EVAL_FLAGS) return null
    for (let i = 0; i < flags.length; i++) {
      const f = flags[i]
      if (typeof f !== 'string' || f.length > 128) return null
    }
  }
  const context = body.context
  if (context !== undefined) {
    if (typeof context !== 'object' || context === null || Array.isArray(context)) return null
    let n = 0
    for (const k in context) {
      // Own keys only (JSON bodies have no others); "__proto__" and friends go to the schema.
      if (!Object.hasOwn(context, k) || k === '__proto__' || ++n > MAX_CONTEXT_ATTRIBUTES || k.length === 0 || k.length > 128) return null
      const v = (context as Record<string, unknown>)[k]
      if (typeof v === 'string') {
        if (v.length > MAX_CONTEXT_VALUE_LENGTH) return null
      } else if (!(v === null || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v)))) return null
    }
    if (Object.getPrototypeOf(context) !== Object.prototype) return null
  }
  return body as EvaluateBody
}
