// The delivery log of flag-change webhooks (`flag_webhook_deliveries`): one document per change
// and webhook, with every attempt (time, status, latency, start of the answer). Partitioned by
// delivery id (partitioned.ts), so one busy webhook's log spreads over every slot; kept to the
// plan's history retention, removed with its webhook.
import type { Db } from 'mongodb'
import { clock } from '../../platform/clock.ts'
import { isDuplicateKey, type IndexSpec } from '../../platform/store/mongo.ts'
import { partitioned, type Partitioned } from '../../platform/store/partitioned.ts'

export interface Attempt {
  at: Date
  status: number | null
  latency_ms: number
  error: string | null
  response_excerpt: string | null
  /** Made by POST …/retry rather than the automatic schedule. */
  manual: boolean
}

export interface DeliveryDoc {
  /** `<change id>-<webhook id>`: newest changes sort first; one delivery per change and webhook. */
  _id: string
  webhook_id: string
  project_id: string
  account_id: string
  change_id: string
  type: string
  state: 'pending' | 'delivered' | 'failed' | 'skipped'
  attempts: Attempt[]
  manual_retries: number
  at: Date
  updated_at: Date
}

export const DELIVERIES_COLLECTION = 'flag_webhook_deliveries'

export const deliveryIndexes: IndexSpec[] = [
  {
    collection: DELIVERIES_COLLECTION,
    partitions: 32,
    indexes: [
      { key: { webhook_id: 1, _id: -1 }, name: 'webhook_newest' },
      { key: { at: 1 }, name: 'at' },
    ],
  },
]

export const deliveries = (db: Db): Partitioned<DeliveryDoc> => partitioned<DeliveryDoc>(db, DELIVERIES_COLLECTION)

export const deliveryId = (changeId: string, webhookId: string) => `${changeId}-${webhookId}`

/** Create the delivery unless it exists (a dispatch that runs twice creates it once). */
export async function ensureDelivery(db: Db, d: Omit<DeliveryDoc, 'state' | 'attempts' | 'manual_retries' | 'at' | 'updated_at'>): Promise<void> {
  const now = clock.now()
  try {
    await deliveries(db).of(d._id).insertOne({ ...d, state: 'pending', attempts: [], manual_retries: 0, at: now, updated_at: now })
  } catch (err) {
    if (!isDuplicateKey(err)) throw err
  }
}

export async function getDelivery(db: Db, webhookId: string, id: string): Promise<DeliveryDoc | null> {
  if (id.length > 128) return null
  return deliveries(db).of(id).findOne({ _id: id, webhook_id: webhookId })
}

/** Append an attempt (one job works on a delivery at a time, so the list is replaced whole). */
export async function recordAttempt(db: Db, d: DeliveryDoc, attempt: Attempt, state: DeliveryDoc['state']): Promise<void> {
  const current = (await getDelivery(db, d.webhook_id, d._id)) ?? d
  await deliveries(db)
    .of(d._id)
    .updateOne({ _id: d._id }, { $set: { attempts: [...current.attempts, attempt], state, updated_at: clock.now() } })
}

export async function setDeliveryState(db: Db, d: DeliveryDoc, state: DeliveryDoc['state']): Promise<void> {
  await deliveries(db).of(d._id).updateOne({ _id: d._id }, { $set: { state, updated_at: clock.now() } })
}

/** Back to pending for a manual retry, unless a retry is already under way; the retry's number, or null. */
export async function reopenDelivery(db: Db, d: DeliveryDoc): Promise<number | null> {
  const n = d.manual_retries + 1
  const r = await deliveries(db)
    .of(d._id)
    .updateOne({ _id: d._id, state: { $ne: 'pending' }, manual_retries: d.manual_retries }, { $set: { state: 'pending', manual_retries: n, updated_at: clock.now() } })
  return r.modifiedCount === 1 ? n : null
}

export async function listDeliveries(db: Db, webhookId: string, opts: { limit: number; before?: string }): Promise<DeliveryDoc[]> {
  const filter: Record<string, unknown> = { webhook_id: webhookId }
  if (opts.before) filter._id = { $lt: opts.before }
  return deliveries(db).findSorted(filter, '_id', -1, opts.limit)
}

export async function deleteDeliveriesOf(db: Db, webhookId: string): Promise<void> {
  await deliveries(db).deleteMany({ webhook_id: webhookId })
}

export function deliveryView(d: DeliveryDoc, withAttempts = true) {
  const last = d.attempts.at(-1)
  return {
    id: d._id,
    change_id: d.change_id,
    type: d.type,
    state: d.state,
    attempt_count: d.attempts.length,
    last_status: last?.status ?? null,
    created_at: d.at.toISOString(),
    updated_at: d.updated_at.toISOString(),
    ...(withAttempts
      ? { attempts: d.attempts.map((a) => ({ at: a.at.toISOString(), status: a.status, latency_ms: a.latency_ms, error: a.error, response_excerpt: a.response_excerpt, manual: a.manual })) }
      : {}),
  }
}
