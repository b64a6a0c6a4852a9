// Accounts of all three services in one collection, scoped by service. API keys are stored only
// as SHA-256 hashes and looked up by hash; the key itself is returned once, at signup.
import type { Db } from 'mongodb'
import { z } from 'zod'
import { clock } from './clock.ts'
import type { Plan, Service } from './plans.ts'
import { conflict } from './http/errors.ts'
import { isDuplicateKey, type IndexSpec } from './mongo.ts'
import { newApiKey, randomId, sha256 } from './ids.ts'

export interface Account {
  _id: string
  service: Service
  email: string
  key_hash: string
  plan: Plan
  created_at: Date
  plan_changed_at?: Date
  stripe_customer_id?: string
  stripe_subscription_id?: string
}

export const accountIndexes: IndexSpec = {
  collection: 'accounts',
  indexes: [
    { key: { service: 1, email: 1 }, name: 'service_email', unique: true },
    { key: { key_hash: 1 }, name: 'key_hash', unique: true },
  ],
}

export const KEY_PREFIX: Record<Service, string> = { invoice: 'dm_', flags: 'fb_', webhooks: 'wv_' }

/** E-mail as accepted at signup: trimmed, lower-cased, sane length. */
export const emailSchema = z
  .string({ error: (i) => (i.input === undefined ? 'email is required' : 'email must be a string') })
  .trim()
  .toLowerCase()
  .max(254, { error: 'email must be at most 254 characters' })
  .pipe(z.email({ error: 'email must be a valid e-mail address' }))

/** POST /signup of every service: `{email}`. */
export const signupSchema = z.object({ body: z.object({ email: emailSchema }) })

const accounts = (db: Db) => db.collection<Account>('accounts')

export async function createAccount(db: Db, service: Service, email: string): Promise<{ account: Account; apiKey: string }> {
  const apiKey = newApiKey(KEY_PREFIX[service])
  const account: Account = {
    _id: randomId(),
    service,
    email,
    key_hash: sha256(apiKey),
    plan: 'free',
    created_at: clock.now(),
  }
  try {
    await accounts(db).insertOne(account)
  } catch (err) {
    if (isDuplicateKey(err)) throw conflict('An account with this email already exists')
    throw err
  }
  return { account, apiKey }
}

export async function findAccountByKey(db: Db, service: Service, key: string): Promise<Account | null> {
  if (!key.startsWith(KEY_PREFIX[service]) || key.length > 200) return null
  const acc = await accounts(db).findOne({ key_hash: sha256(key) })
  return acc && acc.service === service ? acc : null
}

export async function getAccount(db: Db, id: string): Promise<Account | null> {
  return accounts(db).findOne({ _id: id })
}

export async function setPlan(db: Db, id: string, plan: Plan, extra: Partial<Account> = {}): Promise<void> {
  await accounts(db).updateOne({ _id: id }, { $set: { plan, plan_changed_at: clock.now(), ...extra } })
}
