// Billing test helpers: a table of the services that sell plans, signup per service, paying a
// checkout session the way the hosted page's Pay button does, and polling until a change is seen.
import Stripe from 'stripe'
import { getAccount, type Account } from '../../src/platform/accounts.ts'
import type { Service } from '../../src/platform/plans.ts'
import { planChanges, sessions } from '../../src/platform/billing/billing-store.ts'
import type { TestSystem } from './system.ts'
import { call, post } from './http.ts'

export const WEBHOOK = '/api/v1/billing/stripe-webhook'

/** Every service sells plans through the same routes under its host root. */
export const BILLED_SERVICES: Service[] = ['invoice', 'flags', 'webhooks']

let n = 0
export async function signup(sys: TestSystem, service: Service): Promise<{ key: string; account: Account }> {
  const email = `billing-${service}-${Date.now()}-${n++}@example.com`
  const res = await post(`${sys.root[service]}/api/v1/signup`, { email })
  if (res.status !== 200 && res.status !== 201) throw new Error(`signup on ${service}: ${res.status} ${res.text}`)
  const key = res.json.api_key as string
  const accounts = sys.platform.db.collection<Account>('accounts')
  const account = (await accounts.findOne({ service, email }))!
  return { key, account }
}

export async function planOf(sys: TestSystem, accountId: string): Promise<string | undefined> {
  return (await getAccount(sys.platform.db, accountId))?.plan
}

/** POST the hosted page's form; answers the 303 to success_url. */
export async function pay(checkoutUrl: string): Promise<Response> {
  return fetch(checkoutUrl, { method: 'POST', redirect: 'manual' })
}

export async function checkout(sys: TestSystem, service: Service, key: string, plan: string) {
  return call('POST', `${sys.root[service]}/api/v1/checkout`, { json: { plan }, key })
}

export async function countPlanChanges(sys: TestSystem, accountId: string): Promise<number> {
  return planChanges(sys.platform.db).countDocuments({ account_id: accountId })
}

export async function countSessions(sys: TestSystem, accountId?: string): Promise<number> {
  return sessions(sys.platform.db).countDocuments(accountId ? { account_id: accountId } : {})
}

/** Sign a payload the way Stripe does, with the system's webhook secret (or another). */
export function signed(payload: string, secret: string, timestamp?: number): string {
  return Stripe.webhooks.generateTestHeaderString({ payload, secret, timestamp })
}

export async function sendWebhook(sys: TestSystem, service: Service, payload: string, signature?: string) {
  return call('POST', `${sys.root[service]}${WEBHOOK}`, {
    raw: payload,
    headers: signature === undefined ? {} : { 'stripe-signature': signature },
  })
}
