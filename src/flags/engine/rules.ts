// The rule engine: pure, no I/O. Flags are compiled once (when a project's flag set is cached)
// into closures, so evaluating allocates nothing (the percent hash reads ASCII values in place).
// Semantics (docs/flags.md, "Rules"): conditions of a rule are ANDed; rules are tried in order and
// the first
// match serves its value (or a variant of its weighted split); no match serves the flag's default
// (or fallthrough split); a disabled flag serves "false" (flag-types.ts for typed flags) and skips
// its rules. Operators and their missing-attribute rules: operators.ts.
import { disabledValue, type FlagType } from './flag-types.ts'
import { compileCondition, conditionCost, type Condition, type Matcher } from './operators.ts'
import { compileSplit, type Split, type Variant } from './variants.ts'
import { objectText, type EvalContext } from './context.ts'

export { OPERATORS, type Operator, type Condition } from './operators.ts'
export type { FlagType } from './flag-types.ts'
export type { Split, Variant } from './variants.ts'

/** A rule serves `value`, or one of `variants` split by weight (bucketed by `stickiness`). */
export interface Rule {
  conditions: Condition[]
  /** Segments (named condition sets of the project) this rule also requires. */
  segments?: string[]
  value?: unknown
  variants?: Variant[]
  stickiness?: string
}

export interface FlagDefinition {
  key: string
  enabled: boolean
  /** Absent: the seed's untyped flag (string values). */
  type?: FlagType
  /** Served when no rule matches (and no fallthrough split is set). */
  default_value: unknown
  rules: Rule[]
  /** A weighted split served instead of default_value when no rule matches. */
  fallthrough?: Split
}

export type Reason = 'TARGETING_MATCH' | 'DEFAULT' | 'DISABLED' | 'FLAG_NOT_FOUND'

export interface Evaluation {
  readonly value: unknown
  readonly reason: Reason
  /** Index of the matching rule, or null. */
  readonly rule_index: number | null
  /** The variant's name when a weighted split served the value. */
  readonly variant?: string
  /**
   * This result's index in its flag's `results` (-1: of no flag). Not enumerable, so not part of
   * an answer (JSON, spreads and comparisons of results leave it out): it lets a caller that keeps
   * something per result (the in-process provider: OpenFeature details, usage counts) find it
   * with one array read instead of a search or a map lookup.
   */
  readonly slot: number
}

export const DISABLED_VALUE = 'false'

export type { EvalContext } from './context.ts'

export const EMPTY_CONTEXT: EvalContext = Object.freeze(Object.create(null))

// The prototype of every normalised context: empty and itself without one, so no name is
// inherited. A context made from it, unlike an Object.create(null) dictionary, has fast properties
// whose lookups V8 caches by shape (contexts of one shape are the common case).
const NO_INHERITED_NAMES: object = Object.freeze(Object.create(null))

/**
 * Scalars become strings (numbers as JavaScript prints them, booleans as "true"/"false"), and so
 * do objects JSON writes as scalars (a Date as its ISO string: context.ts, objectText);
 * null, other objects and arrays are left out, so conditions on them never match. The engine reads a
 * plain object the same way in place (context.ts): see inPlaceContext for when a copy is needed.
 */
export function normalizeContext(raw: Record<string, unknown> | null | undefined): EvalContext {
  const out: Record<string, string> = Object.create(NO_INHERITED_NAMES)
  if (!raw) return out
  for (const k of Object.keys(raw)) {
    const v = raw[k]
    if (typeof v === 'string') out[k] = v
    else if (typeof v === 'number' && Number.isFinite(v)) out[k] = String(v)
    else if (typeof v === 'boolean') out[k] = v ? 'true' : 'false'
    else if (typeof v === 'object' && v !== null) {
      const t = objectText(v)
      if (t !== undefined) out[k] = t
    }
  }
  return out
}

/**
 * `raw` itself when the engine may read it in place (a plain object: its prototype is
 * Object.prototype, or none, or it is a normalised context), else its normalised copy (a class
 * instance's prototype may hold scalar attributes the copy would not have).
 */
export function inPlaceContext(raw: Record<string, unknown>): EvalContext {
  // Object.getPrototypeOf alone is a runtime call (about 8-12 ns, a tenth of the in-process
  // provider's evaluation). Reading `__proto__` first checks the object's shape against the
  // property's inline cache, after which V8 knows the shape and folds both reads to a constant
  // (1-2 ns for the contexts of one call site's few shapes). `__proto__` alone is not the prototype
  // when the object has an own property of that name (JSON's "__proto__" key), so the prototype
  // itself decides. Objects without Object.prototype have no `__proto__` accessor: checked as before.
  if ((raw as { __proto__?: unknown }).__proto__ === Object.prototype && Object.getPrototypeOf(raw) === Object.prototype) return raw
  const p = Object.getPrototypeOf(raw)
  return p === Object.prototype || p === null || p === NO_INHERITED_NAMES ? raw : normalizeContext(raw)
}

/** A project's segments by name: their conditions. */
export type SegmentConditions = ReadonlyMap<string, readonly Condition[]>
const NO_SEGMENTS: SegmentConditions = new Map()

function compileRule(flagKey: string, rule: Rule, segments: SegmentConditions): Matcher {
  const conditions = [...rule.conditions]
  for (const name of rule.segments ?? []) {
    const seg = segments.get(name)
    // A segment deleted under a rule (only possible in a race with the in-use check) matches no one.
    if (!seg) return () => false
    conditions.push(...seg)
  }
  // Cheapest first (AND of pure conditions: same answer, fewer regex runs and memo lookups).
  const ordered = conditions.map((c, i) => ({ c, i, cost: conditionCost(c) })).sort((x, y) => x.cost - y.cost || x.i - y.i)
  const ms = ordered.map(({ c }) => compileCondition(flagKey, c))
  if (ms.length === 0) return () => true
  if (ms.length === 1) return ms[0]!
  if (ms.length === 2) {
    const [m0, m1] = ms as [Matcher, Matcher]
    return (ctx) => m0(ctx) && m1(ctx)
  }
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
  /** Every result evaluate can return, each at its `slot`. */
  readonly results: readonly Evaluation[]
  evaluate(ctx: EvalContext): Evaluation
}

type ResultFields = Omit<Evaluation, 'slot'>

/** A frozen result with its slot (not enumerable: see Evaluation.slot). */
function result(fields: ResultFields, slot: number): Evaluation {
  return Object.freeze(Object.defineProperty(fields, 'slot', { value: slot })) as Evaluation
}

export const NOT_FOUND: Evaluation = result({ value: null, reason: 'FLAG_NOT_FOUND', rule_index: null }, -1)

/**
 * Results are built once per rule and shared: evaluating returns one of these frozen objects, each
 * belonging to this flag alone (the evaluate answer caches its JSON, key included, per result).
 */
export function compileFlag(def: FlagDefinition, segments: SegmentConditions = NO_SEGMENTS): CompiledFlag {
  const all: Evaluation[] = []
  const add = (fields: ResultFields) => {
    const r = result(fields, all.length)
    all.push(r)
    return r
  }
  const base = { key: def.key, keyJson: JSON.stringify(def.key), definition: def, results: all }
  if (!def.enabled) {
    const disabled = add({ value: disabledValue(def.type, def.default_value), reason: 'DISABLED', rule_index: null })
    return { ...base, evaluate: () => disabled }
  }
  // Each rule (and the fallthrough) serves a fixed result or picks one of its variants' results.
  const serve = (value: unknown, variants: Variant[] | undefined, stickiness: string | undefined, reason: Reason, ruleIndex: number | null) => {
    if (!variants) {
      const r = add({ value, reason, rule_index: ruleIndex })
      return () => r
    }
    const results = variants.map((v) => add({ value: v.value, reason, rule_index: ruleIndex, variant: v.name }))
    return compileSplit(def.key, { variants, ...(stickiness !== undefined ? { stickiness } : {}) }, results)
  }
  const fallback = def.fallthrough
    ? serve(undefined, def.fallthrough.variants, def.fallthrough.stickiness, 'DEFAULT', null)
    : serve(def.default_value, undefined, undefined, 'DEFAULT', null)
  const matchers = def.rules.map((r) => compileRule(def.key, r, segments))
  const results = def.rules.map((r, i) => serve(r.value, r.variants, r.stickiness, 'TARGETING_MATCH', i))
  return { ...base, evaluate: evaluator(matchers, results, fallback) }
}

type Serve = (ctx: EvalContext) => Evaluation

/**
 * The first matching rule's result, else the fallback. Up to three rules (most flags) without a
 * loop over arrays: each call site then sees the rules of one position only.
 */
function evaluator(matchers: Matcher[], results: Serve[], fallback: Serve): (ctx: EvalContext) => Evaluation {
  const n = matchers.length
  if (n === 0) return fallback
  if (n === 1) {
    const [m0, r0] = [matchers[0]!, results[0]!]
    return (ctx) => (m0(ctx) ? r0(ctx) : fallback(ctx))
  }
  if (n === 2) {
    const [m0, m1, r0, r1] = [matchers[0]!, matchers[1]!, results[0]!, results[1]!]
    return (ctx) => (m0(ctx) ? r0(ctx) : m1(ctx) ? r1(ctx) : fallback(ctx))
  }
  if (n === 3) {
    const [m0, m1, m2, r0, r1, r2] = [matchers[0]!, matchers[1]!, matchers[2]!, results[0]!, results[1]!, results[2]!]
    return (ctx) => (m0(ctx) ? r0(ctx) : m1(ctx) ? r1(ctx) : m2(ctx) ? r2(ctx) : fallback(ctx))
  }
  return {
    evaluate(ctx: EvalContext) {
      for (let i = 0; i < n; i++) if (matchers[i]!(ctx)) return results[i]!(ctx)
      return fallback(ctx)
    },
  }.evaluate
}

/** Convenience for one-off evaluations (tests, tools); the service evaluates precompiled flags. */
export function evaluateFlag(def: FlagDefinition, ctx: EvalContext): Evaluation {
  return compileFlag(def).evaluate(ctx)
}
