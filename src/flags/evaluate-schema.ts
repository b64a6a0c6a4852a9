// Request schemas of the evaluation API. Context attributes are scalars (compared as strings);
// bounds keep one request cheap.
import { z } from 'zod'

export const MAX_EVAL_FLAGS = 1_000
export const MAX_CONTEXT_ATTRIBUTES = 100
export const MAX_CONTEXT_VALUE_LENGTH = 2_048

export const contextSchema = z.looseObject({}).superRefine((obj, ctx) => {
  const keys = Object.keys(obj)
  if (keys.length > MAX_CONTEXT_ATTRIBUTES) {
    ctx.addIssue({ code: 'custom', message: `context must have at most ${MAX_CONTEXT_ATTRIBUTES} attributes` })
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
