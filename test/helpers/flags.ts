// Shared helpers of the flag tests: an account on a plan (set directly in MongoDB) with its first
// project and keys, and URLs of a project's management endpoints.
import { findAccountByKey, setPlan } from '../../src/platform/accounts.ts'
import type { Plan } from '../../src/platform/plans.ts'
import { post } from './http.ts'
import type { TestSystem } from './system.ts'

export interface FlagsAccount {
  apiKey: string
  sdkKey: string
  projectId: string
  accountId: string
  /** `${flags service}/api/v1/projects/${projectId}` */
  project: string
}

let n = 0
export async function flagsAccount(sys: TestSystem, plan: Plan = 'free'): Promise<FlagsAccount> {
  const r = await post(`${sys.url.flags}/api/v1/signup`, { email: `flags${++n}-${Date.now()}@example.com` })
  if (r.status !== 201) throw new Error(`signup failed: ${r.status} ${r.text}`)
  const acc = (await findAccountByKey(sys.platform.db, 'flags', r.json.api_key))!
  if (plan !== 'free') await setPlan(sys.platform.db, acc._id, plan)
  const projectId = r.json.project.id as string
  return { apiKey: r.json.api_key, sdkKey: r.json.sdk_key, projectId, accountId: acc._id, project: `${sys.url.flags}/api/v1/projects/${projectId}` }
}
