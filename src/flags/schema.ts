// Request schemas of the management API (signup, projects, flags). Rule bounds live here so that a
// flag that passed validation is always cheap to evaluate.
import { z } from 'zod'
import { normalizeOrigin, ORIGIN_HINT } from '../platform/http/origins.ts'

export const MAX_RULES = 50
export const MAX_CONDITIONS = 20
export const MAX_IN_VALUES = 500
export const MAX_VALUE_LENGTH = 1_024
export const MAX_ATTRIBUTE_LENGTH = 128

export const FLAG_KEY_RE = /^[A-Za-z0-9._-]{1,128}$/
const FLAG_KEY_MESSAGE = 'key must be 1-128 characters of letters, digits, ".", "_" and "-"'

export const flagKeySchema = z
  .string({ error: (i) => (i.input === undefined ? 'key is required' : 'key must be a string') })
  .regex(FLAG_KEY_RE, { error: FLAG_KEY_MESSAGE })

/** Condition values compare as strings: numbers and booleans given in JSON are stored as strings. */
const asString = (v: unknown) => (typeof v === 'number' && Number.isFinite(v)) || typeof v === 'boolean' ? String(v) : v
const scalar = z.preprocess(asString, z.string().max(MAX_VALUE_LENGTH))

const attribute = z.string().trim().min(1).max(MAX_ATTRIBUTE_LENGTH)

const conditionByOperator = z.discriminatedUnion('operator', [
  z.strictObject({ attribute, operator: z.enum(['eq', 'neq']), value: scalar }),
  z.strictObject({ attribute, operator: z.literal('contains'), value: z.preprocess(asString, z.string().min(1).max(MAX_VALUE_LENGTH)) }),
  z.strictObject({ attribute, operator: z.literal('in'), value: z.array(scalar).min(1).max(MAX_IN_VALUES) }),
  z.strictObject({ attribute, operator: z.literal('percent'), value: z.number().min(0).max(100) }),
])

// The operator is checked first so that an unknown one is named as such, not as "not valid".
const condition = z
  .object({ operator: z.enum(['eq', 'neq', 'contains', 'in', 'percent']) })
  .loose()
  .pipe(conditionByOperator)

const rule = z.strictObject({
  conditions: z.array(condition).max(MAX_CONDITIONS),
  value: z.string().max(MAX_VALUE_LENGTH),
})

export const rulesSchema = z.array(rule).max(MAX_RULES)

const flagName = z.string().trim().min(1).max(200)
const defaultValue = z.string().max(MAX_VALUE_LENGTH)


export const projectNameSchema = z.string().trim().min(1).max(100)

export const MAX_ALLOWED_ORIGINS = 100

/**
 * Browser origins whose pages may read this project's evaluations: ["*"] (any, the default) or a
 * list of origins, normalised to what browsers send; [] turns browser access off.
 */
export const allowedOriginsSchema = z
  .array(z.string(), {
    error: (i) => (i.input === undefined ? undefined : 'allowed_origins must be an array of origins, or ["*"] for any origin'),
  })
  .max(MAX_ALLOWED_ORIGINS, { error: `allowed_origins must have at most ${MAX_ALLOWED_ORIGINS} items` })
  .transform((list, ctx) => {
    if (list.includes('*')) {
      if (list.length > 1) ctx.addIssue({ code: 'custom', message: 'allowed_origins: "*" (any origin) cannot be combined with other origins' })
      return ['*']
    }
    const out: string[] = []
    for (const [i, entry] of list.entries()) {
      const origin = normalizeOrigin(entry)
      if (!origin) {
        ctx.addIssue({ code: 'custom', message: `allowed_origins[${i}] must be ${ORIGIN_HINT}, or "*" alone for any origin` })
        return z.NEVER
      }
      if (!out.includes(origin)) out.push(origin)
    }
    return out
  })

export const createProjectSchema = z.object({
  body: z.strictObject({ name: projectNameSchema, allowed_origins: allowedOriginsSchema.optional() }),
})

/** Ids are random base62; anything else cannot exist, and is a 404 rather than a 400. */
export const projectParams = z.object({ id: z.string() })
export const flagParams = z.object({ id: z.string(), key: z.string() })

export const projectPathSchema = z.object({ params: projectParams })
export const flagPathSchema = z.object({ params: flagParams })

export const updateProjectSchema = z.object({
  params: projectParams,
  body: z
    .strictObject({ name: projectNameSchema.optional(), allowed_origins: allowedOriginsSchema.optional() })
    .refine((b) => b.name !== undefined || b.allowed_origins !== undefined, { error: 'body must contain at least one of: name, allowed_origins' }),
})

export const createFlagSchema = z.object({
  params: projectParams,
  body: z.strictObject({
    key: flagKeySchema,
    name: flagName.optional(),
    enabled: z.boolean().default(false),
    default_value: defaultValue.default('true'),
    rules: rulesSchema.default([]),
  }),
})

export const UPDATABLE = ['name', 'enabled', 'default_value', 'rules'] as const

export const updateFlagSchema = z.object({
  params: flagParams,
  body: z
    .strictObject({
      // The key is immutable; repeating the current key is allowed (checked in the route).
      key: z.string().optional(),
      name: flagName.optional(),
      enabled: z.boolean().optional(),
      default_value: defaultValue.optional(),
      rules: rulesSchema.optional(),
    })
    .refine((b) => b.key !== undefined || UPDATABLE.some((f) => b[f] !== undefined), {
      error: `body must contain at least one of: ${UPDATABLE.join(', ')}`,
    }),
})

export type CreateFlagBody = z.infer<typeof createFlagSchema>['body']
export type UpdateFlagBody = z.infer<typeof updateFlagSchema>['body']
