// How the engine reads an attribute of an evaluation context. Conditions compare strings: a
// string attribute as it is, a finite number as JavaScript prints it, a boolean as "true" /
// "false"; anything else (null, objects, arrays, NaN, Infinity) is absent, so conditions on it
// never match (docs/flags.md, "Rules"). The engine reads a caller's plain object in place with
// these rules, so that nothing is copied per evaluation (the in-process provider's OpenFeature
// contexts, evaluate's parsed JSON body): what a plain object inherits from Object.prototype
// (constructor, toString, __proto__) is a function or an object, never a scalar, so it is absent
// too. normalizeContext (rules.ts) gives the same attributes as a copy of strings.
// An object that JSON writes as a scalar — a Date (its toJSON: the ISO string), a boxed string,
// number or boolean — is that scalar, so that the in-process provider reads an OpenFeature
// context (whose values may be Dates) as the OFREP endpoint reads the same context sent as JSON.

/** A context as the engine reads it: any attributes; only scalars count (see above). */
export type EvalContext = { readonly [attribute: string]: unknown }

/** A non-string scalar as the engine compares it; undefined when it is not a scalar. */
export function scalarText(v: unknown): string | undefined {
  if (typeof v === 'number') return Number.isFinite(v) ? String(v) : undefined
  if (typeof v === 'boolean') return v ? 'true' : 'false'
  if (typeof v === 'object' && v !== null) return objectText(v)
  return undefined
}

/**
 * The text of an object that JSON writes as a scalar (what its toJSON answers, as JSON.stringify
 * calls it, then a boxed primitive unboxed), as scalarText reads that scalar; undefined for any
 * object JSON writes as an object, an array or null. Only objects reach here: never the common
 * case, whose attributes are strings, numbers and booleans.
 */
export function objectText(v: object): string | undefined {
  let j: unknown = v
  const toJSON = (v as { toJSON?: unknown }).toJSON
  if (typeof toJSON === 'function') j = toJSON.call(v, '')
  if (typeof j === 'string') return j
  if (j instanceof String) return String(j)
  if (j instanceof Number) j = Number(j)
  else if (j instanceof Boolean) j = j.valueOf()
  return typeof j === 'number' || typeof j === 'boolean' ? scalarText(j) : undefined
}

/**
 * An attribute JSON.stringify leaves out of an object: undefined, a function, a symbol, or an
 * object whose toJSON answers one of those. OFREP never sees such an attribute, so the
 * in-process provider must not count it against the limit of attributes (ofrep-result.ts).
 */
export function leftOutOfJson(v: unknown): boolean {
  if (v === undefined || typeof v === 'function' || typeof v === 'symbol') return true
  if (typeof v !== 'object' || v === null) return false
  const toJSON = (v as { toJSON?: unknown }).toJSON
  if (typeof toJSON !== 'function') return false
  const j = toJSON.call(v, '')
  return j === undefined || typeof j === 'function' || typeof j === 'symbol'
}

/**
 * An attribute's value as a string, or undefined when absent or not a scalar. Callers read the
 * attribute themselves (`textOf(ctx[a])`): a property read inside a shared helper would share one
 * inline cache among every condition's attribute names, where each condition's own read stays
 * monomorphic (the mixed workload measured about 8 M/s with the read inside the helper, 12 without,
 * in alternating processes at load 6-9).
 */
export function textOf(v: unknown): string | undefined {
  return typeof v === 'string' ? v : v === undefined ? undefined : scalarText(v)
}

/**
 * An attribute's value as a number for the number operators: a finite number as it is, a string
 * in decimal notation parsed (`parse`, operators.ts parseNumber), anything else NaN (which
 * compares false with everything). The same as parse(textOf(v)) with NaN for absent, without
 * printing a number only to parse it back.
 */
export function numberOf(v: unknown, parse: (s: string) => number): number {
  if (typeof v === 'number') return Number.isFinite(v) ? v : NaN
  if (typeof v === 'string') return parse(v)
  if (typeof v !== 'object' || v === null) return NaN
  const t = objectText(v)
  return t === undefined ? NaN : parse(t)
}
