// The feature-flag benchmarks' data: a business-plan account with PROJECTS projects of FLAGS flags
// (3 rules each), and one evaluate request per project's SDK key. Shared by bench:flags and
// bench:flags-cpu so that both measure the same requests.
import type { Platform } from '../../../src/platform/platform.ts'
import { findAccountByKey, setPlan } from '../../../src/platform/accounts.ts'
import type { FlagDefinition } from '../../../src/flags/engine/rules.ts'

// Enough SDK keys that each stays well under the business plan's 5,000 requests/s at the rates measured here.
export const PROJECTS = 10
export const FLAGS = 10

/** 3 rules: a list match, an AND of two equalities, and a 30 % rollout on user_id. */
export function flagDef(i: number): Omit<FlagDefinition, 'key'> & { key: string } {
  return {
    key: `feature-${i}`,
    enabled: true,
    default_value: 'false',
    rules: [
      { conditions: [{ attribute: 'country', operator: 'in', value: ['DE', 'AT', 'CH'] }], value: 'true' },
      { conditions: [{ attribute: 'plan', operator: 'eq', value: 'pro' }, { attribute: 'beta', operator: 'eq', value: 'true' }], value: 'true' },
      { conditions: [{ attribute: 'user_id', operator: 'percent', value: 30 }], value: 'true' },
    ],
  }
}

export interface EvaluateRequest {
  method: 'POST'
  path: string
  headers: Record<string, string>
  body: string
}

/** Seeds the data through the API at `base` (…/api/v1) and returns one evaluate request per SDK key. */
export async function seedFlags(platform: Platform, base: string): Promise<EvaluateRequest[]> {
  const postJson = async (url: string, body: unknown, key?: string) => {
    const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) }, body: JSON.stringify(body) })
    if (r.status >= 300) throw new Error(`${url}: ${r.status} ${await r.text()}`)
    return r.json() as Promise<any>
  }
  const signup = await postJson(`${base}/signup`, { email: `bench-${Date.now()}@example.com` })
  const account = await findAccountByKey(platform.db, 'flags', signup.api_key)
  await setPlan(platform.db, account!._id, 'business')
  const keys: string[] = [signup.sdk_key]
  const projects: string[] = [signup.project.id]
  for (let p = 1; p < PROJECTS; p++) {
    const created = await postJson(`${base}/projects`, { name: `bench ${p}` }, signup.api_key)
    keys.push(created.sdk_key)
    projects.push(created.id)
  }
  for (const id of projects) for (let i = 0; i < FLAGS; i++) await postJson(`${base}/projects/${id}/flags`, flagDef(i), signup.api_key)
  const flagKeys = Array.from({ length: FLAGS }, (_, i) => `feature-${i}`)
  const requests = keys.map((sdk_key, i) => ({
    method: 'POST' as const,
    path: '/api/v1/evaluate',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ sdk_key, flags: flagKeys, context: { user_id: `user-${i}`, country: 'FR', plan: 'pro', beta: false } }),
  }))
  const check = await postJson(`${base}/evaluate`, JSON.parse(requests[0]!.body))
  if (Object.keys(check.flags).length !== FLAGS) throw new Error('unexpected evaluation answer')
  return requests
}
