// One validate() middleware per route: parses params, query and body with the route's zod schema,
// puts the typed result on ctx.state.input, and turns the first issue into a message that names
// the field (`items[2].quantity must be > 0`). Messages written in a schema are used as they are.
import type { Context, Next } from 'koa'
import { z } from 'zod'
import { badRequest } from './errors.ts'

const PATH_MARK = '\u0000'

/** A custom message that gets the field's path put in front (`rules[0].value` + message). */
export const atField = (message: string): string => PATH_MARK + message

export function formatPath(path: PropertyKey[]): string {
  let out = ''
  for (const p of path) {
    if (typeof p === 'number') out += `[${p}]`
    else out += out ? `.${String(p)}` : String(p)
  }
  return out || 'body'
}

/** A message written in a schema that the field's path is put in front of ("must be a date" → "due_date must be a date"). */
export function fieldMessage(s: string): string {
  return PATH_MARK + s
}

function typeName(t: string): string {
  return t === 'object' ? 'an object' : t === 'array' ? 'an array' : t === 'integer' || t === 'int' ? 'an integer' : `a ${t}`
}

/** Default messages; marked so that the path is put in front once it is known. */
function defaultMessage(iss: z.core.$ZodRawIssue): string | undefined {
  const i = iss as Record<string, any>
  const m = (s: string) => PATH_MARK + s
  switch (iss.code) {
    case 'invalid_type':
      if (i.input === undefined) return m('is required')
      if (i.expected === 'number' && typeof i.input === 'number') return m('must be a finite number')
      return m(`must be ${typeName(i.expected)}`)
    case 'too_small': {
      if (i.origin === 'string') return m(Number(i.minimum) <= 1 ? 'must not be empty' : `must be at least ${i.minimum} characters`)
      if (i.origin === 'array') return m(`must have at least ${i.minimum} item${Number(i.minimum) === 1 ? '' : 's'}`)
      return m(`must be ${i.inclusive ? '>=' : '>'} ${i.minimum}`)
    }
    case 'too_big': {
      if (i.origin === 'string') return m(`must be at most ${i.maximum} characters`)
      if (i.origin === 'array') return m(`must have at most ${i.maximum} items`)
      return m(`must be ${i.inclusive ? '<=' : '<'} ${i.maximum}`)
    }
    case 'invalid_value':
      return m(`must be one of: ${(i.values as unknown[]).map(String).join(', ')}`)
    case 'invalid_format':
      return m(`must be a valid ${i.format === 'regex' ? 'value' : i.format}`)
    case 'unrecognized_keys':
      return m(`has unknown field${i.keys.length > 1 ? 's' : ''}: ${i.keys.join(', ')}`)
    case 'invalid_union':
      return m('is not valid')
    default:
      return undefined
  }
}

export function issueMessage(issue: z.core.$ZodIssue, prefix: PropertyKey[] = []): string {
  const path = [...prefix, ...issue.path]
  if (issue.message.startsWith(PATH_MARK)) return `${formatPath(path)} ${issue.message.slice(1)}`
  return issue.message
}

export function parseOrThrow<T extends z.ZodType>(schema: T, data: unknown, prefix: PropertyKey[] = []): z.infer<T> {
  const r = schema.safeParse(data, { error: defaultMessage })
  if (!r.success) throw badRequest(issueMessage(r.error.issues[0]!, prefix))
  return r.data
}

/** All issues, formatted (for per-row reports). */
export function parseAll<T extends z.ZodType>(schema: T, data: unknown, prefix: PropertyKey[] = []):
  | { ok: true; data: z.infer<T> }
  | { ok: false; errors: string[] } {
  const r = schema.safeParse(data, { error: defaultMessage })
  if (r.success) return { ok: true, data: r.data }
  return { ok: false, errors: r.error.issues.map((i) => issueMessage(i, prefix)) }
}

export type RequestSchema = z.ZodObject<{ body?: z.ZodType; query?: z.ZodType; params?: z.ZodType }>
export type Input<S extends RequestSchema> = z.infer<S>

const SCHEMA = Symbol('request schema')

/** Validate params, then query, then body: each part's paths are named without a prefix. */
export function validate<S extends RequestSchema>(schema: S) {
  const shape = schema.shape as { body?: z.ZodType; query?: z.ZodType; params?: z.ZodType }
  const mw = async (ctx: Context, next: Next) => {
    const input: Record<string, unknown> = {}
    if (shape.params) input.params = parseOrThrow(shape.params, (ctx as any).params ?? {})
    if (shape.query) input.query = parseOrThrow(shape.query, ctx.query)
    if (shape.body) input.body = parseOrThrow(shape.body, (ctx.request as any).body ?? {})
    ctx.state.input = input
    await next()
  }
  // The OpenAPI generator (ops/openapi.ts) finds each route's schema on its middleware.
  return Object.assign(mw, { [SCHEMA]: schema as RequestSchema })
}

/** Mark a hand-written middleware (a hot path's own checks) as checking `schema`, for the OpenAPI generator. */
export function withSchema<F extends (ctx: Context, next: Next) => unknown>(fn: F, schema: RequestSchema): F {
  return Object.assign(fn, { [SCHEMA]: schema })
}

/** The request schema a validate() middleware checks, if fn is one. */
export function schemaOf(fn: unknown): RequestSchema | undefined {
  return (fn as { [SCHEMA]?: RequestSchema } | null)?.[SCHEMA]
}

/** Typed access to what validate() stored. */
export function input<S extends RequestSchema>(ctx: Context, _schema: S): Input<S> {
  return ctx.state.input as Input<S>
}
