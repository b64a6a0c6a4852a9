// An evaluation as OpenFeature reports it (OFREP's success shape): value, reason, variant and
// metadata. Pure, so that the OFREP endpoint and the in-process provider
// (packages/openfeature-provider) answer alike. A typed flag answers its JSON value; the seed's
// untyped flag answers "true"/"false" as booleans and anything else as a string.
import { leftOutOfJson } from './context.ts'
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
export const CONTEXT_NOT_OBJECT = 'context must be an object'

/**
 * More than MAX_CONTEXT_ATTRIBUTES own (enumerable) attributes that JSON writes (see
 * jsonAttributes; an attribute whose value is undefined is no attribute on OFREP, whose client
 * sends the context as JSON). The in-process provider checks every
 * call, so the common case allocates nothing: for…in walks V8's cached key list of the object's
 * shape, and counts inherited enumerable attributes too (a plain object has none), so a count
 * within the limit is an answer, and only a count past it is confirmed with Object.keys (own
 * attributes only). Object.keys for every call copied the key list: about 17 ns against 7 for the
 * count, a tenth of the provider's mixed-workload evaluation.
 */
export function tooManyAttributes(c: object): boolean {
  let n = 0
  for (const _ in c) if (++n > MAX_CONTEXT_ATTRIBUTES) return jsonAttributes(c) > MAX_CONTEXT_ATTRIBUTES
  return false
}

/**
 * The attributes of `c` that its JSON has (own, enumerable, not left out by JSON.stringify): what
 * OFREP counts of the same context, which its client sends as JSON. A parsed body has no others.
 */
function jsonAttributes(c: object): number {
  let n = 0
  for (const k of Object.keys(c)) if (!leftOutOfJson((c as Record<string, unknown>)[k])) n++
  return n
}

/** `context` must be an object when present; non-scalar attributes are ignored (never match). */
export function contextOf(body: unknown): { ok: true; context: Record<string, unknown> } | { ok: false; details: string } {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return { ok: false, details: 'body must be a JSON object' }
  const c = (body as { context?: unknown }).context
  if (c === undefined || c === null) return { ok: true, context: {} }
  if (typeof c !== 'object' || Array.isArray(c)) return { ok: false, details: CONTEXT_NOT_OBJECT }
  if (tooManyAttributes(c)) return { ok: false, details: TOO_MANY_ATTRIBUTES }
  return { ok: true, context: c as Record<string, unknown> }
}
