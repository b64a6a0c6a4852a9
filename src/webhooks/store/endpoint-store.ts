// Capture endpoints in MongoDB. The token is the document id (random, ≥ 128 bits); `seq` hands
// out the per-endpoint integer ids of captured requests atomically ($inc), so ids never collide
// under concurrency (gaps are possible when a capture is refused after its id was taken).
import type { Db } from 'mongodb'
import type { Account } from '../../platform/accounts.ts'
import { WEBHOOKS_LIMITS } from '../../platform/plans.ts'
import { clock } from '../../platform/clock.ts'
import type { IndexSpec } from '../../platform/store/mongo.ts'

export interface EndpointDoc {
  _id: string // the token
  account_id: string
  name: string | null
  response_code: number
  response_body: string
  response_content_type: string
  forward_url: string | null
  created_at: Date
  /** Set for plans with a limited endpoint lifetime (free: 7 days). */
  expires_at: Date | null
  seq: number
  /** Forwarding paused (captures are still stored); resumed forwards go out in capture order. */
  forward_paused?: boolean
  /**
   * Captures stored per UTC day (YYYY-MM-DD), counted in the write that takes their ids and given
   * back when one is refused, so the overview reads "captures today" without counting captures;
   * days before yesterday are pruned by retention (expire.ts).
   */
  captures_by_day?: Record<string, number>
  /** When the last request to the capture URL arrived (one the daily limit refused included). */
  last_request_at?: Date
}

export const endpointIndexes: IndexSpec = {
  collection: 'webhook_endpoints',
  indexes: [
    { key: { account_id: 1, created_at: 1 }, name: 'account_created' },
    { key: { expires_at: 1 }, name: 'expires_at', partialFilterExpression: { expires_at: { $type: 'date' } } },
  ],
}

export const endpoints = (db: Db) => db.collection<EndpointDoc>('webhook_endpoints')

export const DEFAULT_RESPONSE = { code: 200, body: '{"ok":true}', contentType: 'application/json' }

/** The expiry that applies now: endpoints of accounts that moved to a paid plan no longer expire. */
export function effectiveExpiry(ep: EndpointDoc, account: Pick<Account, 'plan'>): Date | null {
  return WEBHOOKS_LIMITS[account.plan].endpoint_lifetime_days === null ? null : ep.expires_at
}

export function isExpired(ep: EndpointDoc, account: Pick<Account, 'plan'>, now = clock.now()): boolean {
  const exp = effectiveExpiry(ep, account)
  return exp !== null && exp.getTime() <= now.getTime()
}

/** An endpoint of this account, or null (another tenant's token is simply not found). */
export async function findOwnEndpoint(db: Db, accountId: string, token: string): Promise<EndpointDoc | null> {
  const ep = await endpoints(db).findOne({ _id: token })
  return ep && ep.account_id === accountId ? ep : null
}

/** Look the endpoint up and take the next request id in one write. */
export async function takeRequestId(db: Db, token: string): Promise<EndpointDoc | null> {
  return takeRequestIds(db, token, 1)
}

/**
 * Take the next `n` request ids in one write: `seq` of the answer is the highest of them. With
 * `arrived`, the same write counts them as `day`'s captures and notes when they arrived.
 */
export async function takeRequestIds(db: Db, token: string, n: number, arrived?: { day: string; at: Date }): Promise<EndpointDoc | null> {
  const update = arrived ? { $inc: { seq: n, [`captures_by_day.${arrived.day}`]: n }, $set: { last_request_at: arrived.at } } : { $inc: { seq: n } }
  return endpoints(db).findOneAndUpdate({ _id: token }, update, { returnDocument: 'after' })
}

/** A capture counted by takeRequestIds that was not stored after all (refused, or its write failed). Never throws: the sender's answer is the refusal. */
export async function uncountCapture(db: Db, token: string, day: string): Promise<void> {
  await endpoints(db)
    .updateOne({ _id: token, [`captures_by_day.${day}`]: { $gt: 0 } }, { $inc: { [`captures_by_day.${day}`]: -1 } })
    .catch(() => undefined)
}

/** Drop the day counts before `keepFrom` (YYYY-MM-DD) from every endpoint that has any; the number of endpoints changed. */
export async function pruneCaptureDays(db: Db, keepFrom: string): Promise<number> {
  let n = 0
  for (const ep of await endpoints(db).find({ captures_by_day: { $exists: true } }).toArray()) {
    const old = Object.keys(ep.captures_by_day ?? {}).filter((d) => d < keepFrom)
    if (!old.length) continue
    await endpoints(db).updateOne({ _id: ep._id }, { $unset: Object.fromEntries(old.map((d) => [`captures_by_day.${d}`, ''])) })
    n++
  }
  return n
}
