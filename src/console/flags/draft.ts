// A flag's state in one environment as the edit form holds it (every value as the text typed),
// and back: the body of the PUT, or the problems keyed by the same field paths the API names in
// its messages (`rules[0].conditions[1].value`), so our checks and the API's land on the same field.
import { operatorInfo, textOf, valueOf, valueProblem } from './operators.ts'
import type { Condition, Flag, FlagType, Rule, Split, Variant } from './types.ts'

export interface DraftCondition {
  attribute: string
  operator: string
  text: string
  case_insensitive: boolean
  negate: boolean
}
export interface DraftVariant {
  name: string
  weight: string
  value: string
}
export interface DraftSplit {
  variants: DraftVariant[]
  stickiness: string
}
export interface DraftRule {
  conditions: DraftCondition[]
  segments: string[]
  mode: 'value' | 'variants'
  value: string
  split: DraftSplit
}
export interface Draft {
  default_value: string
  rules: DraftRule[]
  /** Serve a weighted split instead of the default when no rule matches. */
  fallthrough: DraftSplit | null
}

export type Problems = Record<string, string>

/** The text of a flag value in the form, by the flag's type. */
/** What the API refuses in a flag key or segment name (flag-schema.ts), in the console's words; null when fine. */
export function keyProblem(key: string): string | null {
  if (!/^[A-Za-z0-9._-]{1,128}$/.test(key)) return '1–128 letters, digits, ".", "_" or "-"'
  if (/^\.+$/.test(key)) return 'Not only dots: a URL could not name it'
  return null
}

export function valueText(type: FlagType | undefined, v: unknown): string {
  if (v === undefined || v === null) return type === 'object' ? '{}' : ''
  if (type === 'object') return JSON.stringify(v, null, 2)
  return String(v)
}

/** A value typed in the form as the API wants it, or the reason it cannot be one. */
export function parseValue(type: FlagType | undefined, text: string): { value?: unknown; problem?: string } {
  switch (type) {
    case 'boolean':
      return text === 'true' || text === 'false' ? { value: text === 'true' } : { problem: 'Choose true or false' }
    case 'number': {
      const n = Number(text.trim())
      return text.trim() !== '' && Number.isFinite(n) ? { value: n } : { problem: 'Give a number (the flag is of type number)' }
    }
    case 'object':
      try {
        const v = JSON.parse(text)
        if (v === null || typeof v !== 'object') return { problem: 'Give a JSON object or array' }
        return text.length > 8192 ? { problem: 'At most 8 KiB of JSON' } : { value: v }
      } catch (e) {
        return { problem: `Not valid JSON: ${(e as Error).message}` }
      }
    default:
      return text.length > 1024 ? { problem: 'At most 1,024 characters' } : { value: text }
  }
}

const splitDraft = (s: Split | undefined, type: FlagType | undefined): DraftSplit => ({
  variants: (s?.variants ?? []).map((v) => ({ name: v.name, weight: String(v.weight), value: valueText(type, v.value) })),
  stickiness: s?.stickiness ?? '',
})

export function emptyVariant(type: FlagType | undefined, n: number): DraftVariant {
  return { name: `variant-${n}`, weight: '0', value: type === 'boolean' ? 'true' : type === 'number' ? '0' : type === 'object' ? '{}' : '' }
}

/** A stored condition as the form holds it. */
export const conditionDraft = (c: Condition): DraftCondition => ({ attribute: c.attribute, operator: c.operator, text: textOf(c.value), case_insensitive: !!c.case_insensitive, negate: !!c.negate })

export function toDraft(f: Flag): Draft {
  return {
    default_value: valueText(f.type, f.default_value),
    rules: f.rules.map((r) => ({
      conditions: r.conditions.map(conditionDraft),
      segments: r.segments ?? [],
      mode: r.variants ? 'variants' : 'value',
      value: r.variants ? valueText(f.type, f.default_value) : valueText(f.type, r.value),
      split: r.variants ? splitDraft({ variants: r.variants, stickiness: r.stickiness }, f.type) : { variants: [{ ...emptyVariant(f.type, 1), weight: '100' }], stickiness: '' },
    })),
    fallthrough: f.fallthrough ? splitDraft(f.fallthrough, f.type) : null,
  }
}

export function newRule(type: FlagType | undefined): DraftRule {
  return {
    conditions: [{ attribute: 'user_id', operator: 'in', text: '', case_insensitive: false, negate: false }],
    segments: [],
    mode: 'value',
    value: type === 'boolean' || type === undefined ? 'true' : type === 'number' ? '0' : type === 'object' ? '{}' : '',
    split: { variants: [{ ...emptyVariant(type, 1), weight: '100' }], stickiness: '' },
  }
}

const VARIANT_NAME = /^[A-Za-z0-9._-]{1,64}$/

function readSplit(s: DraftSplit, type: FlagType | undefined, at: string, problems: Problems): Split {
  const variants: Variant[] = []
  const names = new Set<string>()
  let sum = 0
  s.variants.forEach((v, i) => {
    const p = `${at}.variants[${i}]`
    if (!VARIANT_NAME.test(v.name)) problems[`${p}.name`] = '1–64 letters, digits, ".", "_" or "-"'
    else if (names.has(v.name)) problems[`${p}.name`] = `"${v.name}" is used twice`
    names.add(v.name)
    const w = Number(v.weight)
    if (v.weight.trim() === '' || !Number.isFinite(w) || w < 0 || w > 100) problems[`${p}.weight`] = 'A weight from 0 to 100'
    else if (Math.round(w * 100) !== w * 100) problems[`${p}.weight`] = 'At most two decimals'
    else sum += Math.round(w * 100)
    const pv = parseValue(type, v.value)
    if (pv.problem) problems[`${p}.value`] = pv.problem
    variants.push({ name: v.name, weight: w, value: pv.value })
  })
  if (s.variants.length === 0) problems[`${at}.variants`] = 'Add at least one variant'
  else if (s.variants.length > 20) problems[`${at}.variants`] = 'At most 20 variants'
  else if (sum !== 10000 && !Object.keys(problems).some((k) => k.startsWith(`${at}.variants[`) && k.endsWith('.weight'))) problems[`${at}.variants`] = `The weights add up to ${sum / 100}, not 100`
  const out: Split = { variants }
  if (s.stickiness.trim()) out.stickiness = s.stickiness.trim()
  return out
}

/** The PUT body for the draft, and what is wrong with it (empty when it can be sent). */
export function fromDraft(d: Draft, type: FlagType | undefined): { body: { default_value: unknown; rules: Rule[]; fallthrough: Split | null }; problems: Problems } {
  const problems: Problems = {}
  const dv = parseValue(type, d.default_value)
  if (dv.problem) problems['default_value'] = dv.problem
  const rules: Rule[] = d.rules.map((r, i) => {
    const conditions = r.conditions.map((c, j) => {
      const at = `rules[${i}].conditions[${j}]`
      const info = operatorInfo(c.operator)
      if (!c.attribute.trim()) problems[`${at}.attribute`] = 'Name the context attribute'
      else if (c.attribute.trim().length > 128) problems[`${at}.attribute`] = 'At most 128 characters'
      const why = valueProblem(info.kind, c.text)
      if (why) problems[`${at}.value`] = why
      const cond: Rule['conditions'][number] = { attribute: c.attribute.trim(), operator: c.operator, value: valueOf(info.kind, c.text) }
      if (c.case_insensitive && info.folds) cond.case_insensitive = true
      if (c.negate) cond.negate = true
      return cond
    })
    const rule: Rule = { conditions }
    if (r.segments.length) rule.segments = r.segments
    if (r.mode === 'value') {
      const v = parseValue(type, r.value)
      if (v.problem) problems[`rules[${i}].value`] = v.problem
      rule.value = v.value
    } else {
      const s = readSplit(r.split, type, `rules[${i}]`, problems)
      rule.variants = s.variants
      if (s.stickiness) rule.stickiness = s.stickiness
    }
    return rule
  })
  const fallthrough = d.fallthrough ? readSplit(d.fallthrough, type, 'fallthrough', problems) : null
  return { body: { default_value: dv.value, rules, fallthrough }, problems }
}
