// Unleash's client specification (@unleash/client-specification) translated into this service's
// flags: the spec files of constraint operators, the toggles this service refuses to store (and
// the field its 400 names), the operator mapping and the flattened context. Used by the spec run
// against the service (flags-unleash-spec) and through the in-process provider
// (flags-provider-conformance).
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
export const SPEC_FILES = [
  '09-strategy-constraints.json',
  '11-strategy-constraints-edge-cases.json',
  '13-constraint-operators.json',
  '14-constraint-semver-operators.json',
  '21-regex-constraint-operators.json',
  '22-cidr-constraint-operators.json',
]

/** Spec toggles this service cannot store, with the field its 400 names (docs/flags.md lists why). */
export const NOT_EXPRESSIBLE: Record<string, RegExp> = {
  '09/Feature.constraints.empty': /conditions\[0\]\.value must have at least 1 item/,
  '09/Feature.constraints.empty-not-in': /conditions\[0\]\.value must have at least 1 item/,
  '11/Feature.constraints.no_values': /conditions\[0\]\.value must have at least 1 item/,
  '11/Feature.constraints.no_values_NOT_IN': /conditions\[0\]\.value must have at least 1 item/,
  '13/F7.invalid-operator': /conditions\[0\]\.operator must be one of/,
  '14/F8.invalidSemverWithLeadingV': /conditions\[0\]\.value must be a semantic version/,
  '21/invalid-regex-defaults-to-false': /conditions\[0\]\.value must be a valid RE2 regular expression/,
  '21/R90.reject_lookahead': /conditions\[0\]\.value must be a valid RE2 regular expression/,
  '21/R91.reject_backreference': /conditions\[0\]\.value must be a valid RE2 regular expression/,
  '22/CIDR.mixed.values': /conditions\[0\]\.value must be IP addresses or CIDR ranges/,
  '22/CIDR.invalid.only': /conditions\[0\]\.value must be IP addresses or CIDR ranges/,
  '22/CIDR.ipv6.mixed.values': /conditions\[0\]\.value must be IP addresses or CIDR ranges/,
}

const OPERATOR: Record<string, string> = {
  IN: 'in',
  NOT_IN: 'not_in',
  STR_STARTS_WITH: 'starts_with',
  STR_ENDS_WITH: 'ends_with',
  STR_CONTAINS: 'contains',
  NUM_EQ: 'num_eq',
  NUM_GT: 'gt',
  NUM_GTE: 'gte',
  NUM_LT: 'lt',
  NUM_LTE: 'lte',
  DATE_AFTER: 'after',
  DATE_BEFORE: 'before',
  SEMVER_EQ: 'semver_eq',
  SEMVER_GT: 'semver_gt',
  SEMVER_GTE: 'semver_gte',
  SEMVER_LT: 'semver_lt',
  SEMVER_LTE: 'semver_lte',
  REGEX: 'matches',
  IN_CIDR: 'in_cidr',
}
// Operators whose Unleash constraint holds a list (`values`); the others hold one `value`.
const LIST_OPERATORS = new Set(['IN', 'NOT_IN', 'STR_STARTS_WITH', 'STR_ENDS_WITH', 'STR_CONTAINS', 'IN_CIDR'])

interface UnleashConstraint {
  contextName: string
  operator: string
  values?: string[]
  value?: string
  inverted?: boolean
  caseInsensitive?: boolean
}
interface UnleashStrategy {
  name: string
  parameters?: Record<string, string>
  constraints?: UnleashConstraint[]
}
export interface UnleashFeature {
  name: string
  enabled: boolean
  strategies: UnleashStrategy[]
}
export interface UnleashTest {
  description: string
  context: Record<string, unknown> & { properties?: Record<string, unknown> }
  toggleName: string
  expectedResult: boolean
}

function condition(c: UnleashConstraint) {
  const operator = OPERATOR[c.operator] ?? c.operator // an unknown one is sent as is: the service refuses it
  const value = LIST_OPERATORS.has(c.operator) ? (c.values ?? []) : (c.value ?? c.values?.[0])
  return {
    attribute: c.contextName,
    operator,
    value,
    ...(c.inverted ? { negate: true } : {}),
    ...(c.caseInsensitive ? { case_insensitive: true } : {}),
  }
}

/** One rule per strategy (strategies are ORed, like rules); userWithId's ids become an `in` condition. */
export function translateFeature(f: UnleashFeature) {
  const rules = f.strategies.map((s) => {
    const conditions = (s.constraints ?? []).map(condition)
    if (s.name === 'userWithId') {
      const ids = (s.parameters?.userIds ?? '').split(',').map((x) => x.trim()).filter(Boolean)
      conditions.push({ attribute: 'userId', operator: 'in', value: ids })
    } else if (s.name !== 'default') throw new Error(`strategy ${s.name} not translated`)
    return { conditions, value: true }
  })
  return { key: f.name, type: 'boolean', enabled: f.enabled, default_value: false, rules }
}

/** Unleash's context: standard fields and `properties`, flattened; null means absent. */
export function contextOf(t: UnleashTest): Record<string, unknown> {
  const { properties, ...fields } = t.context
  return { ...fields, ...(properties ?? {}) }
}


/** A spec file's toggles and test cases. */
export function specFile(file: string): { state: { features: UnleashFeature[] }; tests: UnleashTest[] } {
  return require(`@unleash/client-specification/specifications/${file}`)
}
