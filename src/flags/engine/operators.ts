// Condition operators: how each one's value is parsed (once, when a flag is compiled or validated)
// and how it matches a context value. Semantics follow Unleash's constraint operators: a missing
// attribute matches nothing except the negative list/substring operators (`not_in`,
// `not_contains`), a context value that does not parse as the operator's type (number, semver,
// date, IP address) does not match, and `negate` inverts the final result, missing attribute
// included. `neq` keeps the seed's rule: a missing attribute never matches it.
import ipaddr from 'ipaddr.js'
import { RE2JS } from 're2js'
import semver from 'semver'
import { engineNowMs } from './now.ts'
import { numberOf, scalarText, textOf, type EvalContext } from './context.ts'
import { rolloutBuckets } from './percent-bucket.ts'

export const STRING_OPERATORS = ['eq', 'neq', 'contains', 'not_contains', 'starts_with', 'ends_with'] as const
export const LIST_OPERATORS = ['in', 'not_in'] as const
export const NUMBER_OPERATORS = ['gt', 'gte', 'lt', 'lte', 'num_eq'] as const
export const SEMVER_OPERATORS = ['semver_eq', 'semver_gt', 'semver_gte', 'semver_lt', 'semver_lte'] as const
export const DATE_OPERATORS = ['before', 'after'] as const

export const OPERATORS = [
  ...STRING_OPERATORS,
  ...LIST_OPERATORS,
  'matches',
  ...NUMBER_OPERATORS,
  ...SEMVER_OPERATORS,
  ...DATE_OPERATORS,
  'in_cidr',
  'percent',
] as const
export type Operator = (typeof OPERATORS)[number]

export const MAX_REGEX_LENGTH = 256
/** The attribute that `before` / `after` read as the evaluation time. */
export const NOW_ATTRIBUTE = 'now'

export interface ConditionOptions {
  /** Compare strings (and regular expressions) ignoring case. */
  case_insensitive?: boolean
  /** Invert the condition's result (a missing attribute too). */
  negate?: boolean
}

export type Condition = { attribute: string } & ConditionOptions &
  (
    | { operator: 'eq' | 'neq' | 'matches' | 'semver_eq' | 'semver_gt' | 'semver_gte' | 'semver_lt' | 'semver_lte' | 'before' | 'after'; value: string }
    | { operator: 'contains' | 'not_contains' | 'starts_with' | 'ends_with' | 'in_cidr'; value: string | string[] }
    | { operator: 'in' | 'not_in'; value: string[] }
    | { operator: 'gt' | 'gte' | 'lt' | 'lte' | 'num_eq' | 'percent'; value: number }
  )

/** Strict SemVer 2.0.0 (no leading "v", no loose forms), as Unleash reads versions; null if not one. */
export function parseSemver(s: string): semver.SemVer | null {
  if (s.length > 256 || !/^\d/.test(s)) return null
  try {
    return new semver.SemVer(s)
  } catch {
    return null
  }
}

// ISO 8601 date-time with a time zone (Z or ±hh:mm), seconds and fractions optional.
const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/i

/** Milliseconds since the epoch of an ISO 8601 date-time with time zone; NaN if not one. */
export function parseDateTime(s: string): number {
  return ISO_DATE_TIME.test(s) ? Date.parse(s) : NaN
}

/** A context value as a number: decimal notation only ("12", "12.0", "-1e3"); NaN otherwise. */
export function parseNumber(s: string): number {
  const n = Number(s)
  // Number("") and Number("  ") are 0: only then is the (allocating) trim needed.
  return n === 0 && s.trim() === '' ? NaN : n
}

/** An address or a CIDR range (a bare address is its own /32 or /128); null if neither. */
export function parseCidr(s: string): [ipaddr.IPv4 | ipaddr.IPv6, number] | null {
  try {
    if (s.includes('/')) return ipaddr.parseCIDR(s)
    if (!ipaddr.isValid(s)) return null
    const a = ipaddr.parse(s)
    return [a, a.kind() === 'ipv4' ? 32 : 128]
  } catch {
    return null
  }
}

/** The regular expression of a `matches` condition (RE2 syntax, linear time); throws if invalid. */
export function compileRegex(pattern: string, caseInsensitive: boolean): RE2JS {
  return RE2JS.compile(pattern, caseInsensitive ? RE2JS.CASE_INSENSITIVE : 0)
}

/** Why a condition value cannot be used, or null. Schema validation uses it; compiling relies on it. */
export function invalidValue(c: Condition): string | null {
  switch (c.operator) {
    case 'matches':
      if (c.value.length > MAX_REGEX_LENGTH) return `must be at most ${MAX_REGEX_LENGTH} characters`
      try {
        compileRegex(c.value, c.case_insensitive === true)
        return null
      } catch (err) {
        return `must be a valid RE2 regular expression (${String((err as Error).message ?? err).slice(0, 200)})`
      }
    case 'semver_eq':
    case 'semver_gt':
    case 'semver_gte':
    case 'semver_lt':
    case 'semver_lte':
      return parseSemver(c.value) ? null : 'must be a semantic version such as 1.2.3 or 2.0.0-beta.1'
    case 'before':
    case 'after':
      return Number.isNaN(parseDateTime(c.value)) ? 'must be an ISO 8601 date-time with time zone, such as 2026-01-31T12:00:00Z' : null
    case 'in_cidr': {
      const list = typeof c.value === 'string' ? [c.value] : c.value
      for (const v of list) if (!parseCidr(v)) return `must be IP addresses or CIDR ranges (not valid: ${JSON.stringify(v.slice(0, 64))})`
      return null
    }
    default:
      return null
  }
}

type Test = (x: string) => boolean

// Characters that stand for themselves in RE2 syntax outside a class (no escapes, no metacharacters).
const LITERAL_CHAR = /[A-Za-z0-9 _\-@\/:=,;'"!%&~<>#]/

/**
 * The literal text every match of `pattern` starts the value with, when the pattern begins with
 * `^` and then plain characters (`^qa-`, `^https://`); `whole` when the pattern is nothing more.
 * Conservative: any `|` (an alternative could escape the anchor), a case-insensitive condition or
 * an inline flag gives null. A quantifier after the run takes its last character back out.
 */
export function anchoredLiteral(pattern: string): { prefix: string; whole: boolean } | null {
  if (pattern[0] !== '^' || pattern.includes('|')) return null
  let end = 1
  while (end < pattern.length && LITERAL_CHAR.test(pattern[end]!)) end++
  let prefix = pattern.slice(1, end)
  const next = pattern[end]
  if (next === '?' || next === '*' || next === '+' || next === '{') prefix = prefix.slice(0, -1)
  if (prefix === '') return null
  return { prefix, whole: end === pattern.length }
}
export type Matcher = (ctx: EvalContext) => boolean

const lower = (s: string) => s.toLowerCase()

/** Results per context value remembered by a condition (regex, CIDR, date, semver); cleared when full. */
export const MEMO_ENTRIES = 4_096

/**
 * The test with its answers remembered for the last MEMO_ENTRIES distinct values. Evaluating is
 * pure, and the values these operators read (user ids, e-mails, versions, addresses) repeat from
 * request to request, while parsing them or running a regex costs several times a hash lookup.
 */
function memo(test: Test): Test {
  let seen = new Map<string, boolean>()
  return (x) => {
    let r = seen.get(x)
    if (r === undefined) {
      r = test(x)
      if (seen.size >= MEMO_ENTRIES) seen = new Map()
      seen.set(x, r)
    }
    return r
  }
}

/** The test of a present value; `missing` is the result for an absent attribute (before negate). */
function valueTest(flagKey: string, c: Condition): { test: Test; missing: boolean } {
  const ci = c.case_insensitive === true
  const norm = ci ? lower : (s: string) => s
  const list = (v: string | string[]) => (typeof v === 'string' ? [v] : v).map(norm)
  switch (c.operator) {
    case 'eq': {
      const v = norm(c.value)
      return { test: ci ? (x) => lower(x) === v : (x) => x === v, missing: false }
    }
    case 'neq': {
      const v = norm(c.value)
      return { test: ci ? (x) => lower(x) !== v : (x) => x !== v, missing: false }
    }
    case 'contains':
    case 'not_contains': {
      const vs = list(c.value)
      const has: Test = vs.length === 1 ? (x) => x.includes(vs[0]!) : (x) => vs.some((v) => x.includes(v))
      const t: Test = ci ? (x) => has(lower(x)) : has
      return c.operator === 'contains' ? { test: t, missing: false } : { test: (x) => !t(x), missing: true }
    }
    case 'starts_with':
    case 'ends_with': {
      const vs = list(c.value)
      const ends = c.operator === 'ends_with'
      // One value (the usual case) without a loop; a list loops without a closure per call.
      const one: Test | null = vs.length !== 1 ? null : ends ? (x) => x.endsWith(vs[0]!) : (x) => x.startsWith(vs[0]!)
      const any: Test = one ?? ((x) => {
        for (let i = 0; i < vs.length; i++) if (ends ? x.endsWith(vs[i]!) : x.startsWith(vs[i]!)) return true
        return false
      })
      return { test: ci ? (x) => any(lower(x)) : any, missing: false }
    }
    case 'in':
    case 'not_in': {
      const set = new Set(list(c.value))
      const t: Test = ci ? (x) => set.has(lower(x)) : (x) => set.has(x)
      return c.operator === 'in' ? { test: t, missing: false } : { test: (x) => !t(x), missing: true }
    }
    case 'matches': {
      const re = compileRegex(c.value, ci)
      // A search, as Unleash's REGEX: anchor with ^ and $ to match the whole value.
      const search = memo((x) => re.matcher(x).find())
      const lit = ci ? null : anchoredLiteral(c.value)
      if (!lit) return { test: search, missing: false }
      // `^qa-`: a value without the prefix cannot match, and needs neither the memo nor the regex.
      const { prefix, whole } = lit
      return { test: whole ? (x) => x.startsWith(prefix) : (x) => x.startsWith(prefix) && search(x), missing: false }
    }
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte':
    case 'num_eq': {
      const v = c.value
      const cmp =
        c.operator === 'gt' ? (n: number) => n > v
        : c.operator === 'gte' ? (n: number) => n >= v
        : c.operator === 'lt' ? (n: number) => n < v
        : c.operator === 'lte' ? (n: number) => n <= v
        : (n: number) => n === v
      // NaN compares false with everything: a value that is not a number never matches.
      return { test: (x) => cmp(parseNumber(x)), missing: false }
    }
    case 'semver_eq':
    case 'semver_gt':
    case 'semver_gte':
    case 'semver_lt':
    case 'semver_lte': {
      const v = parseSemver(c.value)!
      const want =
        c.operator === 'semver_eq' ? (r: number) => r === 0
        : c.operator === 'semver_gt' ? (r: number) => r > 0
        : c.operator === 'semver_gte' ? (r: number) => r >= 0
        : c.operator === 'semver_lt' ? (r: number) => r < 0
        : (r: number) => r <= 0
      return {
        test: memo((x) => {
          const p = parseSemver(x)
          return p !== null && want(p.compare(v))
        }),
        missing: false,
      }
    }
    case 'before':
    case 'after': {
      const v = parseDateTime(c.value)
      const before = c.operator === 'before'
      // NaN (not a date-time) compares false: such a value never matches.
      return { test: memo(before ? (x) => parseDateTime(x) < v : (x) => parseDateTime(x) > v), missing: false }
    }
    case 'in_cidr': {
      const ranges = (typeof c.value === 'string' ? [c.value] : c.value).map((s) => parseCidr(s)!)
      return {
        test: memo((x) => {
          if (!ipaddr.isValid(x)) return false
          let a = ipaddr.parse(x)
          if (a.kind() === 'ipv6' && (a as ipaddr.IPv6).isIPv4MappedAddress()) a = (a as ipaddr.IPv6).toIPv4Address()
          return ranges.some(([net, bits]) => net.kind() === a.kind() && a.match(net, bits))
        }),
        missing: false,
      }
    }
    case 'percent': {
      const p = c.value
      if (p <= 0) return { test: () => false, missing: false }
      const bucket = rolloutBuckets(flagKey)
      // As inRollout(flagKey, x, p): the bucket as a percentage, below p.
      return { test: (x) => bucket(x) / 100 < p, missing: false }
    }
  }
}

/** A condition as a function of the context; the value is assumed valid (invalidValue). */
export function compileCondition(flagKey: string, c: Condition): Matcher {
  const a = c.attribute
  if ((c.operator === 'before' || c.operator === 'after') && a === NOW_ATTRIBUTE) {
    const v = parseDateTime(c.value)
    const before = c.operator === 'before'
    const neg = c.negate === true
    return () => (before ? engineNowMs() < v : engineNowMs() > v) !== neg
  }
  if (c.operator === 'eq' && c.case_insensitive !== true && c.negate !== true) {
    // The seed's commonest condition, kept to one property read and one comparison (a number or
    // boolean attribute is printed only when the string comparison failed).
    const v = c.value
    return (ctx) => {
      const x = textOf(ctx[a])
      return x === v || (typeof x !== 'string' && scalarText(x) === v)
    }
  }
  const direct = directMatcher(c)
  if (direct) return direct
  const { test, missing } = valueTest(flagKey, c)
  if (c.negate === true) {
    const absent = !missing
    return (ctx) => {
      const x = textOf(ctx[a])
      return x === undefined ? absent : !test(x)
    }
  }
  if (missing) {
    return (ctx) => {
      const x = textOf(ctx[a])
      return x === undefined || test(x)
    }
  }
  return (ctx) => {
    const x = textOf(ctx[a])
    return x !== undefined && test(x)
  }
}

/**
 * The plain operators as one closure each, with no inner test function: a rule's loop calls
 * conditions of many kinds from one place, where V8 cannot inline, so each extra call level costs.
 * Only the case-sensitive, non-negated forms (the common ones); the rest go through valueTest.
 */
function directMatcher(c: Condition): Matcher | null {
  if (c.case_insensitive === true || c.negate === true) return null
  const a = c.attribute
  switch (c.operator) {
    case 'in': {
      const set = new Set(c.value)
      return (ctx) => {
        const x = textOf(ctx[a])
        return x !== undefined && set.has(x)
      }
    }
    case 'not_in': {
      const set = new Set(c.value)
      return (ctx) => {
        const x = textOf(ctx[a])
        return x === undefined || !set.has(x)
      }
    }
    case 'starts_with':
    case 'ends_with': {
      if (typeof c.value !== 'string' && c.value.length !== 1) return null
      const v = typeof c.value === 'string' ? c.value : c.value[0]!
      if (c.operator === 'starts_with') {
        return (ctx) => {
          const x = textOf(ctx[a])
          return x !== undefined && x.startsWith(v)
        }
      }
      return (ctx) => {
        const x = textOf(ctx[a])
        return x !== undefined && x.endsWith(v)
      }
    }
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte': {
      const v = c.value
      // NaN compares false with everything: a value that is not a number never matches.
      if (c.operator === 'gt') return (ctx) => numberOf(ctx[a], parseNumber) > v
      if (c.operator === 'gte') return (ctx) => numberOf(ctx[a], parseNumber) >= v
      if (c.operator === 'lt') return (ctx) => numberOf(ctx[a], parseNumber) < v
      return (ctx) => numberOf(ctx[a], parseNumber) <= v
    }
    default:
      return null
  }
}

/**
 * A rough cost class of evaluating a condition: plain comparisons 0, a hash 1, a memo lookup
 * (and on a miss a parse or a regex run) 2. A rule's conditions are ANDed and pure, so testing
 * the cheap ones first gives the same answer and skips the dear ones for users who miss anyway.
 */
export function conditionCost(c: Condition): number {
  switch (c.operator) {
    case 'percent':
      return 1
    case 'matches':
      // `^qa-` is tested as startsWith before the memo: as cheap as a plain comparison for the
      // users the prefix excludes (most of them), so it goes first.
      return c.case_insensitive !== true && anchoredLiteral(c.value) ? 0 : 2
    case 'semver_eq':
    case 'semver_gt':
    case 'semver_gte':
    case 'semver_lt':
    case 'semver_lte':
    case 'in_cidr':
      return 2
    case 'before':
    case 'after':
      return c.attribute === NOW_ATTRIBUTE ? 0 : 2
    default:
      return 0
  }
}
