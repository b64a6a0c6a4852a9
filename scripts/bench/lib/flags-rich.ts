// The benchmarks' workload for the engine (docs/flags.md, "Operators", "Weighted variants"): flags
// that use the Unleash-style operators, weighted
// variants and a segment. Per-operator cases for the engine micro-benchmark, and one project per
// SDK key seeded through the API for the HTTP run.
import type { Platform } from '../../../src/platform/platform.ts'
import { findAccountByKey, setPlan } from '../../../src/platform/accounts.ts'
import type { Condition, FlagDefinition } from '../../../src/flags/engine/rules.ts'
import type { EvaluateRequest } from './flags-setup.ts'

/** One condition per operator, and a context attribute value that exercises it (a match about half the time). */
export const OPERATOR_CASES: { name: string; condition: Condition; value: (i: number) => string }[] = [
  { name: 'eq', condition: { attribute: 'x', operator: 'eq', value: 'user-7' }, value: (i) => `user-${i & 15}` },
  { name: 'in (10 values)', condition: { attribute: 'x', operator: 'in', value: Array.from({ length: 10 }, (_, i) => `user-${i}`) }, value: (i) => `user-${i & 15}` },
  { name: 'not_in', condition: { attribute: 'x', operator: 'not_in', value: ['user-1', 'user-2'] }, value: (i) => `user-${i & 15}` },
  { name: 'contains', condition: { attribute: 'x', operator: 'contains', value: '@corp' }, value: (i) => (i & 1 ? `u${i}@corp.example` : `u${i}@mail.example`) },
  { name: 'not_contains', condition: { attribute: 'x', operator: 'not_contains', value: '@corp' }, value: (i) => (i & 1 ? `u${i}@corp.example` : `u${i}@mail.example`) },
  { name: 'starts_with', condition: { attribute: 'x', operator: 'starts_with', value: ['admin-', 'ops-'] }, value: (i) => (i & 1 ? `admin-${i}` : `user-${i}`) },
  { name: 'ends_with (case_insensitive)', condition: { attribute: 'x', operator: 'ends_with', value: '.EXAMPLE', case_insensitive: true }, value: (i) => (i & 1 ? `a${i}.example` : `a${i}.test`) },
  { name: 'matches (RE2)', condition: { attribute: 'x', operator: 'matches', value: '^user-[0-9]+7$' }, value: (i) => `user-${i}` },
  { name: 'gt', condition: { attribute: 'x', operator: 'gt', value: 50 }, value: (i) => String(i % 100) },
  { name: 'lte', condition: { attribute: 'x', operator: 'lte', value: 50 }, value: (i) => String(i % 100) },
  { name: 'semver_gt', condition: { attribute: 'x', operator: 'semver_gt', value: '2.3.0' }, value: (i) => `2.${i % 8}.${i % 3}` },
  { name: 'semver_lt', condition: { attribute: 'x', operator: 'semver_lt', value: '2.3.0' }, value: (i) => `2.${i % 8}.${i % 3}` },
  { name: 'after (date attribute)', condition: { attribute: 'x', operator: 'after', value: '2026-06-01T00:00:00Z' }, value: (i) => `2026-0${1 + (i % 9)}-15T12:00:00Z` },
  { name: 'before (now)', condition: { attribute: 'now', operator: 'before', value: '2099-01-01T00:00:00Z' }, value: () => '' },
  { name: 'in_cidr', condition: { attribute: 'x', operator: 'in_cidr', value: ['10.0.0.0/8', '2001:db8::/32'] }, value: (i) => (i & 1 ? `10.1.${i & 255}.7` : `192.168.${i & 255}.7`) },
  { name: 'percent', condition: { attribute: 'x', operator: 'percent', value: 30 }, value: (i) => `user-${i}` },
  { name: 'eq, negate', condition: { attribute: 'x', operator: 'eq', value: 'user-7', negate: true }, value: (i) => `user-${i & 15}` },
]

/** The segment every rich flag's first rule uses. */
export const RICH_SEGMENT = { name: 'internal', conditions: [{ attribute: 'email', operator: 'ends_with', value: '@corp.example' }] as Condition[] }

/** 3 rules and a fallthrough split: segment + semver, regex + number, a 3-way variant split. */
export function richFlagDef(i: number): Omit<FlagDefinition, 'key'> & { key: string; segments?: never } {
  return {
    key: `rich-${i}`,
    enabled: true,
    type: 'string',
    default_value: 'control',
    rules: [
      { conditions: [{ attribute: 'app_version', operator: 'semver_gte', value: '3.0.0' }], segments: [RICH_SEGMENT.name], value: 'internal' },
      { conditions: [{ attribute: 'user_id', operator: 'matches', value: '^qa-' }, { attribute: 'age', operator: 'gte', value: 18 }], value: 'qa' },
      {
        conditions: [{ attribute: 'country', operator: 'not_in', value: ['US', 'CA'] }],
        variants: [
          { name: 'a', weight: 50, value: 'blue' },
          { name: 'b', weight: 30, value: 'green' },
          { name: 'c', weight: 20, value: 'red' },
        ],
      },
    ],
    fallthrough: { variants: [{ name: 'off', weight: 90, value: 'control' }, { name: 'on', weight: 10, value: 'treatment' }] },
  }
}

/** A rich context: misses rules 0 and 1 (after evaluating them), lands in the split of rule 2. */
export const richContext = (i: number) => ({ user_id: `user-${i}`, email: `u${i}@mail.example`, app_version: '3.1.0', age: 30, country: 'FR' })

/** Seeds `projects` projects of `flags` rich flags (and the segment) through the API; one evaluate request per SDK key. */
export async function seedRichFlags(platform: Platform, base: string, projects: number, flags: number): Promise<EvaluateRequest[]> {
  const postJson = async (url: string, body: unknown, key?: string) => {
    const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) }, body: JSON.stringify(body) })
    if (r.status >= 300) throw new Error(`${url}: ${r.status} ${await r.text()}`)
    return r.json() as Promise<any>
  }
  const signup = await postJson(`${base}/signup`, { email: `bench-rich-${Date.now()}@example.com` })
  const account = await findAccountByKey(platform.db, 'flags', signup.api_key)
  await setPlan(platform.db, account!._id, 'business')
  const keys: string[] = [signup.sdk_key]
  const ids: string[] = [signup.project.id]
  for (let p = 1; p < projects; p++) {
    const created = await postJson(`${base}/projects`, { name: `bench rich ${p}` }, signup.api_key)
    keys.push(created.sdk_key)
    ids.push(created.id)
  }
  for (const id of ids) {
    await postJson(`${base}/projects/${id}/segments`, RICH_SEGMENT, signup.api_key)
    for (let i = 0; i < flags; i++) await postJson(`${base}/projects/${id}/flags`, richFlagDef(i), signup.api_key)
  }
  const flagKeys = Array.from({ length: flags }, (_, i) => `rich-${i}`)
  return keys.map((sdk_key, i) => ({
    method: 'POST' as const,
    path: '/api/v1/evaluate',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ sdk_key, flags: flagKeys, context: richContext(i) }),
  }))
}
