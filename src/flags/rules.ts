// The rule engine: pure, no I/O. Flags are compiled once (when a project's flag set is cached)
// into closures, so evaluating allocates nothing (the percent hash reads ASCII values in place).
// Semantics (DESIGN.md §7): conditions of a rule are ANDed; rules are tried in order and the first
// match serves its value; no match serves the flag's default; a disabled flag serves "false" and
// skips its rules. Conditions compare as strings; a missing attribute never matches any operator.
import { rolloutBuckets } from './percent-bucket.ts'

export const OPERATORS = ['eq', 'neq', 'contains', 'in', 'percent'] as const
export type Operator = (typeof OPERATORS)[number]

export type Condition =
  | { attribute: string; operator: 'eq' | 'neq' | 'contains'; value: string }
  | { attribute: string; operator: 'in'; value: string[] }
  | { attribute: string; operator: 'percent'; value: number }

export interface Rule {
  conditions: Condition[]
  value: string
}

export interface FlagDefinition {
  key: string
  enabled: boolean
  /** Served when no rule matches. */
  default_value: string
  rules: Rule[]
}

export type Reason = 'TARGETING_MATCH' | 'DEFAULT' | 'DISABLED' | 'FLAG_NOT_FOUND'

export interface Evaluation {
  readonly value: string | null
  readonly reason: Reason
  /** Index of the matching rule, or null. */
  readonly rule_index: number | null
}

export const DISABLED_VALUE = 'false'

/** Attributes as the engine sees them: strings only, no prototype (so "constructor" is not an attribute). */
export type EvalContext = { readonly [attribute: string]: string | undefined }

export const EMPTY_CONTEXT: EvalContext = Object.freeze(Object.create(null))

// The prototype of every normalised context: empty and itself without one, so no name is
// inherited. A context made from it, unlike an Object.create(null) dictionary, has fast properties
// whose lookups V8 caches by shape (contexts of one shape are the common case).
const NO_INHERITED_NAMES: object = Object.freeze(Object.create(null))

/**
 * Scalars become strings (numbers as JavaScript prints them, booleans as "true"/"false");
 * null, objects and arrays are left out, so conditions on them never match.
 */
export function normalizeContext(raw: Record<string, unknown> | null | undefined): EvalContext {
  const out: Record<string, string> = Object.create(NO_INHERITED_NAMES)
  if (!raw) return out
  for (const k of Object.keys(raw)) {
    const v = raw[k]
    if (typeof v === 'string') out[k] = v
    else if (typeof v === 'number' && Number.isFinite(v)) out[k] = String(v)
    else if (typeof v === 'boolean') out[k] = v ? 'true' : 'false'
  }
  return out
}

type Matcher = (ctx: EvalContext) => boolean

function compileCondition(flagKey: string, c: Condition): Matcher {
  const a = c.attribute
  switch (c.operator) {
    case 'eq': {
      const v = c.value
      return (ctx) => ctx[a] === v
    }
    case 'neq': {
      const v = c.value
      return (ctx) => {
        const x = ctx[a]
        return x !== undefined && x !== v
      }
    }
    case 'contains': {
      const v = c.value
      return (ctx) => {
        const x = ctx[a]
        return x !== undefined && x.includes(v)
      }
    }
    case 'in': {
      const set = new Set(c.value)
      return (ctx) => {
        const x = ctx[a]
        return x !== undefined && set.has(x)
      }
    }
    case 'percent': {
      const p = c.value
      if (p <= 0) return () => false
      const bucket = rolloutBuckets(flagKey)
      // As inRollout(flagKey, x, p): the bucket as a percentage, below p.
      return (ctx) => {
        const x = ctx[a]
        return x !== undefined && bucket(x) / 100 < p
      }
    }
  }
}

function compileRule(flagKey: string, rule: Rule): Matcher {
  const ms = rule.conditions.map((c) => compileCondition(flagKey, c))
  if (ms.length === 0) return () => true
  if (ms.length === 1) return ms[0]!
  return (ctx) => {
    for (let i = 0; i < ms.length; i++) if (!ms[i]!(ctx)) return false
    return true
  }
}

export interface CompiledFlag {
  readonly key: string
  /** JSON.stringify(key), for answers written by hand. */
  readonly keyJson: string
  readonly definition: FlagDefinition
  evaluate(ctx: EvalContext): Evaluation
}

export const NOT_FOUND: Evaluation = Object.freeze({ value: null, reason: 'FLAG_NOT_FOUND', rule_index: null })

/**
 * Results are built once per rule and shared: evaluating returns one of these frozen objects, each
 * belonging to this flag alone (the evaluate answer caches its JSON, key included, per result).
 */
export function compileFlag(def: FlagDefinition): CompiledFlag {
  if (!def.enabled) {
    const disabled: Evaluation = Object.freeze({ value: DISABLED_VALUE, reason: 'DISABLED', rule_index: null })
    return { key: def.key, keyJson: JSON.stringify(def.key), definition: def, evaluate: () => disabled }
  }
  const fallback: Evaluation = Object.freeze({ value: def.default_value, reason: 'DEFAULT', rule_index: null })
  const matchers = def.rules.map((r) => compileRule(def.key, r))
  const results = def.rules.map((r, i): Evaluation => Object.freeze({ value: r.value, reason: 'TARGETING_MATCH', rule_index: i }))
  const n = matchers.length
  return {
    key: def.key,
    keyJson: JSON.stringify(def.key),
    definition: def,
    evaluate(ctx) {
      for (let i = 0; i < n; i++) if (matchers[i]!(ctx)) return results[i]!
      return fallback
    },
  }
}

/** Convenience for one-off evaluations (tests, tools); the service evaluates precompiled flags. */
export function evaluateFlag(def: FlagDefinition, ctx: EvalContext): Evaluation {
  return compileFlag(def).evaluate(ctx)
}
