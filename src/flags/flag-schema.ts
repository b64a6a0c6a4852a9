// Request schemas of the management API (signup, projects, flags). Rule bounds live here so that a
// flag that passed validation is always cheap to evaluate; every operator value is checked here
// with the same parsers the engine compiles it with (operators.ts), so a stored flag always compiles.
import { z } from 'zod'
import { normalizeOrigin, ORIGIN_HINT } from '../platform/http/origins.ts'
import { atField } from '../platform/http/validate.ts'
import { FLAG_TYPES, implicitDefault, typeIssue } from './engine/flag-types.ts'
import { DATE_OPERATORS, invalidValue, NUMBER_OPERATORS, OPERATORS, SEMVER_OPERATORS, type Condition } from './engine/operators.ts'
import { invalidSplit, MAX_VARIANTS, VARIANT_NAME_RE, type Variant } from './engine/variants.ts'

export const MAX_RULES = 50
export const MAX_CONDITIONS = 20
export const MAX_IN_VALUES = 500
export const MAX_VALUE_LENGTH = 1_024
export const MAX_ATTRIBUTE_LENGTH = 128

export const MAX_RULE_SEGMENTS = 10

export const FLAG_KEY_RE = /^[A-Za-z0-9._-]{1,128}$/
const FLAG_KEY_MESSAGE = 'key must be 1-128 characters of letters, digits, ".", "_" and "-"'

/**
 * A key made only of dots cannot be named in a URL path: "." and ".." are removed from it by every
 * HTTP client before the request leaves (`/flags/..` is `/`), so OFREP's single-flag route and the
 * management API could never reach it. Refused when a flag or segment is created.
 */
export const ONLY_DOTS = /^\.+$/
export const ONLY_DOTS_MESSAGE = 'cannot be made only of dots (a URL cannot name it)'

export const flagKeySchema = z
  .string({ error: (i) => (i.input === undefined ? 'key is required' : 'key must be a string') })
  .regex(FLAG_KEY_RE, { error: FLAG_KEY_MESSAGE })
  .refine((k) => !ONLY_DOTS.test(k), { error: `key ${ONLY_DOTS_MESSAGE}` })

/** Condition values compare as strings: numbers and booleans given in JSON are stored as strings. */
/** Segment names follow flag keys' rules. */
export const segmentNameSchema = z
  .string({ error: (i) => (i.input === undefined ? atField('is required') : atField('must be a string')) })
  .regex(FLAG_KEY_RE, { error: atField('must be 1-128 characters of letters, digits, ".", "_" and "-"') })

const asString = (v: unknown) => (typeof v === 'number' && Number.isFinite(v)) || typeof v === 'boolean' ? String(v) : v
const scalar = z.preprocess(asString, z.string().max(MAX_VALUE_LENGTH))
const nonEmpty = z.preprocess(asString, z.string().min(1).max(MAX_VALUE_LENGTH))
/** One string or a list (any of them matches): Unleash's string operators take lists. */
const oneOrMany = z.preprocess(
  (v) => (Array.isArray(v) ? v : asString(v)),
  z.union([z.string().min(1).max(MAX_VALUE_LENGTH), z.array(nonEmpty).min(1).max(MAX_IN_VALUES)], {
    error: atField(`must be a non-empty string or a list of 1-${MAX_IN_VALUES} non-empty strings of at most ${MAX_VALUE_LENGTH} characters`),
  }),
)
/** Numbers may be given as JSON numbers or numeric strings ("12", as Unleash stores them). */
const numeric = z.preprocess((v) => (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v)) ? Number(v) : v), z.number())

const attribute = z.string().trim().min(1).max(MAX_ATTRIBUTE_LENGTH)
const common = { attribute, case_insensitive: z.boolean().optional(), negate: z.boolean().optional() }

const conditionByOperator = z.discriminatedUnion('operator', [
  z.strictObject({ ...common, operator: z.enum(['eq', 'neq']), value: scalar }),
  z.strictObject({ ...common, operator: z.enum(['contains', 'not_contains', 'starts_with', 'ends_with', 'in_cidr']), value: oneOrMany }),
  z.strictObject({ ...common, operator: z.enum(['in', 'not_in']), value: z.array(scalar).min(1).max(MAX_IN_VALUES) }),
  z.strictObject({ ...common, operator: z.literal('matches'), value: z.string() }),
  z.strictObject({ ...common, operator: z.enum(NUMBER_OPERATORS), value: numeric }),
  z.strictObject({ ...common, operator: z.enum([...SEMVER_OPERATORS, ...DATE_OPERATORS]), value: z.string().max(MAX_VALUE_LENGTH) }),
  z.strictObject({ ...common, operator: z.literal('percent'), value: z.number().min(0).max(100) }),
])

// The operator is checked first so that an unknown one is named as such, not as "not valid";
// then the value's shape, then whether it can be used (regex, semver, date-time, CIDR).
export const conditionSchema = z
  .object({ operator: z.enum(OPERATORS) })
  .loose()
  .pipe(conditionByOperator)
  .superRefine((c, ctx) => {
    const why = invalidValue(c as Condition)
    if (why) ctx.addIssue({ code: 'custom', path: ['value'], message: atField(why) })
  })

const variant = z.strictObject({
  name: z.string().regex(VARIANT_NAME_RE, { error: atField('must be 1-64 characters of letters, digits, ".", "_" and "-"') }),
  weight: z.number().min(0).max(100),
  value: z.unknown().refine((v) => v !== undefined, { error: atField('is required') }),
})

const variantsSchema = z
  .array(variant)
  .min(1)
  .max(MAX_VARIANTS)
  .superRefine((vs, ctx) => {
    const why = invalidSplit(vs as Variant[])
    if (why) ctx.addIssue({ code: 'custom', message: atField(why) })
  })

const rule = z
  .strictObject({
    conditions: z.array(conditionSchema).max(MAX_CONDITIONS),
    /** Segments of the project whose conditions this rule also requires (AND). */
    segments: z.array(segmentNameSchema).max(MAX_RULE_SEGMENTS).optional(),
    value: z.unknown().optional(),
    variants: variantsSchema.optional(),
    stickiness: attribute.optional(),
  })
  .superRefine((r, ctx) => {
    if (r.value === undefined && r.variants === undefined) ctx.addIssue({ code: 'custom', path: ['value'], message: atField('is required') })
    else if (r.value !== undefined && r.variants !== undefined) ctx.addIssue({ code: 'custom', message: atField('must have either value or variants, not both') })
    else if (r.stickiness !== undefined && r.variants === undefined) ctx.addIssue({ code: 'custom', path: ['stickiness'], message: atField('is only used with variants') })
  })

export const rulesSchema = z.array(rule).max(MAX_RULES)

/** A weighted split served when no rule matches (instead of default_value); null removes it. */
const fallthroughSchema = z.strictObject({ variants: variantsSchema, stickiness: attribute.optional() })

const flagName = z.string().trim().min(1).max(200)

export const MAX_TAGS = 20
export const TAG_RE = /^[A-Za-z0-9][A-Za-z0-9._:/-]{0,39}$/
/** Labels to find flags by: up to 20, each 1-40 characters; repeats are dropped, the order kept. */
export const tagsSchema = z
  .array(z.string({ error: atField('must be a string') }).regex(TAG_RE, { error: atField('must be 1-40 characters of letters, digits, ".", "_", ":", "/" and "-", starting with a letter or digit') }))
  .max(MAX_TAGS)
  .transform((tags) => [...new Set(tags)])
const flagType = z.enum(FLAG_TYPES)

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

/** `?environment=` on the flag endpoints (default production); checked against the project by the route. */
export const environmentQuery = z.object({ environment: z.string().max(64).optional() })

export const projectPathSchema = z.object({ params: projectParams })
export const listFlagsSchema = z.object({ params: projectParams, query: environmentQuery })
export const flagPathSchema = z.object({ params: flagParams, query: environmentQuery })

export const updateProjectSchema = z.object({
  params: projectParams,
  body: z
    .strictObject({ name: projectNameSchema.optional(), allowed_origins: allowedOriginsSchema.optional() })
    .refine((b) => b.name !== undefined || b.allowed_origins !== undefined, { error: 'body must contain at least one of: name, allowed_origins' }),
})

export const createFlagSchema = z.object({
  params: projectParams,
  query: environmentQuery,
  body: z
    .strictObject({
      key: flagKeySchema,
      name: flagName.optional(),
      enabled: z.boolean().default(false),
      type: flagType.optional(),
      default_value: z.unknown().optional(),
      rules: rulesSchema.default([]),
      fallthrough: fallthroughSchema.optional(),
      tags: tagsSchema.optional(),
    })
    .transform((b, ctx) => {
      const default_value = b.default_value ?? implicitDefault(b.type)
      if (default_value === undefined) {
        ctx.addIssue({ code: 'custom', path: ['default_value'], message: atField(`is required for a flag of type ${b.type}`) })
        return z.NEVER
      }
      const issue = typeIssue(b.type, { ...b, default_value })
      if (issue) {
        ctx.addIssue({ code: 'custom', message: issue })
        return z.NEVER
      }
      return { ...b, default_value }
    }),
})

export const UPDATABLE = ['name', 'enabled', 'default_value', 'rules', 'fallthrough', 'tags'] as const

/** Partial update. Values are checked against the stored flag's type by the route (flag-types.ts). */
export const updateFlagSchema = z.object({
  params: flagParams,
  query: environmentQuery,
  body: z
    .strictObject({
      // The key and type are immutable; repeating the current ones is allowed (checked in the route).
      key: z.string().optional(),
      type: flagType.optional(),
      name: flagName.optional(),
      enabled: z.boolean().optional(),
      default_value: z.unknown().optional(),
      rules: rulesSchema.optional(),
      fallthrough: fallthroughSchema.nullable().optional(),
      tags: tagsSchema.optional(),
    })
    .refine((b) => b.key !== undefined || b.type !== undefined || UPDATABLE.some((f) => b[f] !== undefined), {
      error: `body must contain at least one of: ${UPDATABLE.join(', ')}`,
    }),
})

export type CreateFlagBody = z.infer<typeof createFlagSchema>['body']
export type UpdateFlagBody = z.infer<typeof updateFlagSchema>['body']
