// Accounts of all three services in one collection, scoped by service. API keys are stored only
// as SHA-256 hashes and looked up by hash; the key itself is returned once, at signup.
import type { Db } from 'mongodb'
import { LRUCache } from 'lru-cache'
import { z } from 'zod'
import { clock } from './clock.ts'
import type { Plan, Service } from './plans.ts'
import { conflict } from './http/errors.ts'
import { isDuplicateKey, type IndexSpec } from './store/mongo.ts'
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
  /** When the key was last replaced (rotateApiKey). */
  key_rotated_at?: Date
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

/**
 * How long a process reuses an account it found by key: a client sends the same key with every
 * request, and the lookup was one of the few MongoDB round trips of an invoice. What can be stale
 * is the plan and, after a rotation (rotateApiKey), the key: a change is seen at once by the
 * process that made it and within this time by the others (docs/operations.md, "API key lookups").
 */
export const ACCOUNT_CACHE_MS = 1_000

// By database and key hash (never the key itself): tests run several systems in one process.
const byKeyHash = new LRUCache<string, Account>({ max: 10_000, ttl: ACCOUNT_CACHE_MS })

export async function findAccountByKey(db: Db, service: Service, key: string, opts: { cached?: boolean } = {}): Promise<Account | null> {
  if (!key.startsWith(KEY_PREFIX[service]) || key.length > 200) return null
  const hash = sha256(key)
  const cacheKey = `${db.databaseName}:${hash}`
  let acc = opts.cached ? byKeyHash.get(cacheKey) : undefined
  if (!acc) {
    acc = (await accounts(db).findOne({ key_hash: hash })) ?? undefined
    // Only keys that exist: unknown keys are not worth the memory (each guess is a new one).
    if (acc && opts.cached) byKeyHash.set(cacheKey, acc)
  }
  return acc && acc.service === service ? acc : null
}

function forgetAccount(db: Db, id: string): void {
  for (const [k, acc] of byKeyHash.entries()) if (acc._id === id && k.startsWith(`${db.databaseName}:`)) byKeyHash.delete(k)
}

/**
 * Replaces the account's API key (the flags console's "rotate"): the old key stops working at once
 * in this process and within ACCOUNT_CACHE_MS in the others. Null when the account is gone.
 */
export async function getAccount(db: Db, id: string): Promise<Account | null> {
  return accounts(db).findOne({ _id: id })
}

export async function setPlan(db: Db, id: string, plan: Plan, extra: Partial<Account> = {}): Promise<void> {
  await accounts(db).updateOne({ _id: id }, { $set: { plan, plan_changed_at: clock.now(), ...extra } })
  forgetAccount(db, id)
}

export const ROTATED_MESSAGE = 'Save your new API key now: it is shown only once. The previous key no longer works.'
export const ROTATE_RACE = 'The API key was already replaced by another request; use the key that request returned.'

/**
 * A new key for the account, returned once; the key it had stops working at once in this process
 * and within ACCOUNT_CACHE_MS in the others. `account.key_hash` is that of the key the caller
 * authenticated with: of two rotations racing with the same key only the first succeeds (null for
 * the second), so no caller is handed a key that was already replaced.
 */
export async function rotateApiKey(db: Db, account: Pick<Account, '_id' | 'service' | 'key_hash'>): Promise<string | null> {
  const apiKey = newApiKey(KEY_PREFIX[account.service])
  const r = await accounts(db).updateOne({ _id: account._id, key_hash: account.key_hash }, { $set: { key_hash: sha256(apiKey), key_rotated_at: clock.now() } })
  forgetAccount(db, account._id)
  return r.modifiedCount === 1 ? apiKey : null
}
