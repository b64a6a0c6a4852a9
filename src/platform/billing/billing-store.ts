// Billing records in MongoDB: the checkout sessions we created (what the sweep reconciles and the
// only source of "which account is this session for"), Stripe event ids already handled, and an
// audit trail of plan changes (one entry per paid session or ended subscription).
import type { Db } from 'mongodb'
import { clock } from '../clock.ts'
import { isDuplicateKey, type IndexSpec } from '../store/mongo.ts'
import type { PaidPlan, Plan, Service } from '../plans.ts'

export type SessionStatus = 'open' | 'completed' | 'expired'

export interface CheckoutSessionDoc {
  _id: string // Stripe checkout session id
  account_id: string
  service: Service
  plan: PaidPlan
  status: SessionStatus
  created_at: Date
  checked_at?: Date
  completed_at?: Date
  customer_id?: string
  subscription_id?: string
}

export interface StripeEventDoc {
  _id: string // `${service}:${event id}`: every service's endpoint receives every event
  service: Service
  event_id: string
  type: string
  received_at: Date
}

export interface PlanChangeDoc {
  _id: string // `checkout:<session id>` | `ended:<subscription id>`: one change per cause
  account_id: string
  service: Service
  from: Plan
  to: Plan
  at: Date
}

export const billingIndexes: IndexSpec[] = [
  {
    collection: 'checkout_sessions',
    indexes: [
      { key: { status: 1, checked_at: 1 }, name: 'status_checked' },
      { key: { subscription_id: 1 }, name: 'subscription_id', sparse: true },
      { key: { account_id: 1, created_at: -1 }, name: 'account_created' },
    ],
  },
  { collection: 'stripe_events', indexes: [{ key: { received_at: 1 }, name: 'received_at', expireAfterSeconds: 90 * 86_400 }] },
  { collection: 'plan_changes', indexes: [{ key: { account_id: 1, at: -1 }, name: 'account_at' }] },
]

export const sessions = (db: Db) => db.collection<CheckoutSessionDoc>('checkout_sessions')
const events = (db: Db) => db.collection<StripeEventDoc>('stripe_events')
export const planChanges = (db: Db) => db.collection<PlanChangeDoc>('plan_changes')

export async function recordSession(db: Db, doc: Omit<CheckoutSessionDoc, 'status' | 'created_at'>): Promise<void> {
  const now = clock.now()
  await sessions(db).insertOne({ ...doc, status: 'open', created_at: now, checked_at: now })
}

/** true the first time this service sees the event; false for a redelivery. */
export async function recordEvent(db: Db, service: Service, eventId: string, type: string): Promise<boolean> {
  try {
    await events(db).insertOne({ _id: `${service}:${eventId}`, service, event_id: eventId, type, received_at: clock.now() })
    return true
  } catch (err) {
    if (isDuplicateKey(err)) return false
    throw err
  }
}

/** Forget an event whose handling could not be started, so Stripe's redelivery is handled. */
export async function forgetEvent(db: Db, service: Service, eventId: string): Promise<void> {
  await events(db).deleteOne({ _id: `${service}:${eventId}` })
}

/** Audit entry; false when this cause was already recorded. */
export async function recordPlanChange(db: Db, doc: Omit<PlanChangeDoc, 'at'>): Promise<boolean> {
  try {
    await planChanges(db).insertOne({ ...doc, at: clock.now() })
    return true
  } catch (err) {
    if (isDuplicateKey(err)) return false
    throw err
  }
}
