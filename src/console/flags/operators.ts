// Every condition operator of the rule engine, with the kind of value each takes and how the
// console asks for it. The list is the engine's (src/flags/engine/operators.ts); it is copied
// rather than imported so the browser bundle does not carry the engine's parsers, and
// test/console-operators.test.ts fails when the two lists differ.
export type ValueKind = 'text' | 'list' | 'text-or-list' | 'regex' | 'number' | 'semver' | 'datetime' | 'cidr' | 'percent'

export interface OperatorInfo {
  op: string
  label: string
  group: string
  kind: ValueKind
  /** case_insensitive changes what it matches. */
  folds: boolean
}

const o = (op: string, label: string, group: string, kind: ValueKind, folds = false): OperatorInfo => ({ op, label, group, kind, folds })

export const OPERATOR_INFO: OperatorInfo[] = [
  o('eq', 'equals', 'Text', 'text', true),
  o('neq', 'does not equal', 'Text', 'text', true),
  o('contains', 'contains any of', 'Text', 'text-or-list', true),
  o('not_contains', 'contains none of', 'Text', 'text-or-list', true),
  o('starts_with', 'starts with any of', 'Text', 'text-or-list', true),
  o('ends_with', 'ends with any of', 'Text', 'text-or-list', true),
  o('in', 'is one of', 'Lists', 'list', true),
  o('not_in', 'is not one of', 'Lists', 'list', true),
  o('matches', 'matches regular expression (RE2)', 'Text', 'regex', true),
  o('gt', 'number >', 'Numbers', 'number'),
  o('gte', 'number ≥', 'Numbers', 'number'),
  o('lt', 'number <', 'Numbers', 'number'),
  o('lte', 'number ≤', 'Numbers', 'number'),
  o('num_eq', 'number =', 'Numbers', 'number'),
  o('semver_eq', 'version =', 'Versions (SemVer)', 'semver'),
  o('semver_gt', 'version >', 'Versions (SemVer)', 'semver'),
  o('semver_gte', 'version ≥', 'Versions (SemVer)', 'semver'),
  o('semver_lt', 'version <', 'Versions (SemVer)', 'semver'),
  o('semver_lte', 'version ≤', 'Versions (SemVer)', 'semver'),
  o('before', 'date-time before', 'Dates', 'datetime'),
  o('after', 'date-time after', 'Dates', 'datetime'),
  o('in_cidr', 'IP address in range (CIDR)', 'Network', 'cidr'),
  o('percent', 'in percentage rollout', 'Rollout', 'percent'),
]

export const OPERATORS = OPERATOR_INFO.map((i) => i.op)
export const operatorInfo = (op: string): OperatorInfo => OPERATOR_INFO.find((i) => i.op === op) ?? OPERATOR_INFO[0]!

export const VALUE_HINTS: Record<ValueKind, string> = {
  text: 'Text, compared exactly.',
  list: 'One value per line (1–500).',
  'text-or-list': 'One value per line; any of them matches.',
  regex: 'RE2 syntax, up to 256 characters: no look-around, no back-references. A search: anchor with ^…$.',
  number: 'A decimal number.',
  semver: 'A SemVer 2.0.0 version such as 2.1.0 or 2.0.0-rc.1 (no leading v).',
  datetime: 'ISO 8601 with a time zone, e.g. 2026-01-31T12:00:00Z. With the attribute "now" the evaluation time is compared.',
  cidr: 'Addresses or ranges, one per line (IPv4 or IPv6), e.g. 10.0.0.0/8.',
  percent: '0–100 (buckets are hundredths of a percent): users whose bucket of this attribute falls below it are in.',
}

const SEMVER_RE = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$/
const DATE_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/i
const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/
const IPV6 = /^[0-9a-f:.]+$/i

export const lines = (text: string) => text.split('\n').map((s) => s.trim()).filter(Boolean)

function cidrProblem(s: string): string | null {
  const [addr, bits, extra] = s.split('/')
  if (extra !== undefined) return `"${s}" is not an address or CIDR range`
  if (IPV4.test(addr!)) return bits === undefined || (/^\d+$/.test(bits) && Number(bits) <= 32) ? null : `"${s}": an IPv4 prefix is 0–32`
  if (addr!.includes(':') && IPV6.test(addr!)) return bits === undefined || (/^\d+$/.test(bits) && Number(bits) <= 128) ? null : `"${s}": an IPv6 prefix is 0–128`
  return `"${s}" is not an address or CIDR range`
}

/** Why the text typed for an operator cannot be its value, or null; the API checks again. */
export function valueProblem(kind: ValueKind, text: string): string | null {
  const t = text.trim()
  switch (kind) {
    case 'text':
      return text.length > 1024 ? 'At most 1,024 characters' : null
    case 'list':
    case 'text-or-list': {
      const l = lines(text)
      if (l.length === 0) return 'Give at least one value'
      if (l.length > 500) return 'At most 500 values'
      return l.some((v) => v.length > 1024) ? 'Each value has at most 1,024 characters' : null
    }
    case 'regex': {
      if (!text) return 'Give a regular expression'
      if (text.length > 256) return 'At most 256 characters'
      if (/\(\?(=|!|<=|<!)/.test(text)) return 'RE2 has no look-ahead or look-behind'
      // The rest of RE2's syntax differs from JavaScript's ((?i) is RE2, \C is not): the API checks it.
      return /\\[1-9]/.test(text) ? 'RE2 has no back-references' : null
    }
    case 'number':
      return t !== '' && Number.isFinite(Number(t)) ? null : 'Give a number'
    case 'percent': {
      const n = Number(t)
      return t === '' || !Number.isFinite(n) || n < 0 || n > 100 ? 'Give a percentage from 0 to 100' : null
    }
    case 'semver':
      return SEMVER_RE.test(t) ? null : 'Not a SemVer 2.0.0 version (e.g. 2.1.0, no leading v)'
    case 'datetime':
      return DATE_RE.test(t) && !Number.isNaN(Date.parse(t)) ? null : 'Not an ISO 8601 date-time with a time zone (e.g. 2026-01-31T12:00:00Z)'
    case 'cidr': {
      const l = lines(text)
      if (l.length === 0) return 'Give at least one address or range'
      for (const v of l) {
        const p = cidrProblem(v)
        if (p) return p
      }
      return null
    }
  }
}

/** The value sent to the API for the typed text. */
export function valueOf(kind: ValueKind, text: string): unknown {
  switch (kind) {
    case 'list':
      return lines(text)
    case 'text-or-list':
    case 'cidr': {
      const l = lines(text)
      return l.length === 1 ? l[0] : l
    }
    case 'number':
    case 'percent':
      // Empty stays text: Number('') would be 0, a value nobody typed.
      return text.trim() === '' ? '' : Number(text.trim())
    case 'semver':
    case 'datetime':
      return text.trim()
    default:
      return text
  }
}

/** The text shown for a stored value. */
export function textOf(value: unknown): string {
  if (Array.isArray(value)) return value.join('\n')
  if (value === undefined || value === null) return ''
  return String(value)
}
