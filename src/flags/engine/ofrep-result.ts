// An evaluation as OpenFeature reports it (OFREP's success shape): value, reason, variant and
// metadata. Pure, so that the OFREP endpoint and the in-process provider
// (packages/openfeature-provider) answer alike. A typed flag answers its JSON value; the seed's
// untyped flag answers "true"/"false" as booleans and anything else as a string.
import type { CompiledFlag, EvalContext, Evaluation } from './rules.ts'

export interface OfrepSuccess {
  key: string
  value: unknown
  reason: 'TARGETING_MATCH' | 'DEFAULT' | 'DISABLED'
  variant: string
  metadata: Record<string, string | number | boolean>
}

export function typedValue(v: string): boolean | string {
  return v === 'true' ? true : v === 'false' ? false : v
}

/** The variant OpenFeature reports: the split's variant, else `rule-<i>`, `disabled` or `default`. */
export function variantOf(r: Evaluation): string {
  return r.variant ?? (r.rule_index !== null ? `rule-${r.rule_index}` : r.reason === 'DISABLED' ? 'disabled' : 'default')
}

export function ofrepResult(key: string, r: Evaluation, typed = false): OfrepSuccess {
  const variant = variantOf(r)
  return {
    key,
    value: typed ? r.value : typedValue(typeof r.value === 'string' ? r.value : ''),
    reason: r.reason as OfrepSuccess['reason'],
    variant,
    metadata: r.rule_index !== null ? { rule_index: r.rule_index } : {},
  }
}

export function evaluateOfrep(f: CompiledFlag, ctx: EvalContext): OfrepSuccess {
  return ofrepResult(f.key, f.evaluate(ctx), f.definition.type !== undefined)
}

export const MAX_CONTEXT_ATTRIBUTES = 100
export const TOO_MANY_ATTRIBUTES = `context must have at most ${MAX_CONTEXT_ATTRIBUTES} attributes`

/**
 * More than MAX_CONTEXT_ATTRIBUTES own (enumerable) attributes. The provider checks every call:
 * Object.keys copies V8's cached key list of the object's shape, where counting with for…in and
 * Object.hasOwn cost a lookup per key.
 */
export function tooManyAttributes(c: object): boolean {
  return Object.keys(c).length > MAX_CONTEXT_ATTRIBUTES
}

/** `context` must be an object when present; non-scalar attributes are ignored (never match). */
export function contextOf(body: unknown): { ok: true; context: Record<string, unknown> } | { ok: false; details: string } {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return { ok: false, details: 'body must be a JSON object' }
  const c = (body as { context?: unknown }).context
  if (c === undefined || c === null) return { ok: true, context: {} }
  if (typeof c !== 'object' || Array.isArray(c)) return { ok: false, details: 'context must be an object' }
  if (tooManyAttributes(c)) return { ok: false, details: TOO_MANY_ATTRIBUTES }
  return { ok: true, context: c as Record<string, unknown> }
}
