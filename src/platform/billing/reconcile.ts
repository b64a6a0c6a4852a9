// Applying what Stripe confirms: a paid checkout session upgrades the account it was created for;
// an ended subscription puts its account back on free. Stripe is asked every time (a webhook is
// only a hint), the target account comes from our own session record, and every step is
// idempotent, so webhooks, redeliveries and the sweep can all run it for the same session.
import type { Db } from 'mongodb'
import { clock } from '../clock.ts'
import { getAccount, setPlan } from '../accounts.ts'
import { logger } from '../logger.ts'
import type { Platform } from '../platform.ts'
import { withStripeRetry, type Stripe } from './stripe-client.ts'
import { recordPlanChange, sessions } from './billing-store.ts'

export type ReconcileResult =
  | { outcome: 'upgraded'; account_id: string; plan: string }
  | { outcome: 'downgraded'; account_id: string }
  | { outcome: 'already_applied' | 'not_paid' | 'expired' | 'unknown' | 'mismatch' | 'still_active' | 'superseded' }

function stripeOf(platform: Platform): Stripe {
  if (!platform.stripe) throw new Error('billing is not configured (STRIPE_SECRET_KEY)')
  return platform.stripe
}

const idOf = (v: string | { id: string } | null | undefined) => (typeof v === 'string' ? v : (v?.id ?? undefined))

export async function reconcileSession(platform: Platform, sessionId: string): Promise<ReconcileResult> {
  const { db } = platform
  const record = await sessions(db).findOne({ _id: sessionId })
  // Not created by our checkout: whatever its metadata says, it upgrades nobody.
  if (!record) return { outcome: 'unknown' }
  if (record.status === 'completed') return { outcome: 'already_applied' }
  const session = await withStripeRetry(() => stripeOf(platform).checkout.sessions.retrieve(sessionId))
  await sessions(db).updateOne({ _id: sessionId, status: 'open' }, { $set: { checked_at: clock.now() } })
  if (session.status === 'expired') {
    await sessions(db).updateOne({ _id: sessionId, status: 'open' }, { $set: { status: 'expired' } })
    return { outcome: 'expired' }
  }
  const paid = session.status === 'complete' && (session.payment_status === 'paid' || session.payment_status === 'no_payment_required')
  if (!paid) return { outcome: 'not_paid' }
  const md = session.metadata ?? {}
  const account = await getAccount(db, record.account_id)
  if (
    !account ||
    account.service !== record.service ||
    md.account_id !== record.account_id ||
    md.service !== record.service ||
    md.plan !== record.plan ||
    session.client_reference_id !== record.account_id
  ) {
    logger.warn({ sessionId, account: record.account_id }, 'paid checkout session does not match its record; not applied')
    return { outcome: 'mismatch' }
  }
  const customerId = idOf(session.customer)
  const subscriptionId = idOf(session.subscription)
  const previousSub = account.stripe_subscription_id
  // Setting the plan is idempotent, so it goes first: a crash before the session is marked
  // completed only means the next run sets the same plan again.
  await setPlan(db, account._id, record.plan, {
    ...(customerId ? { stripe_customer_id: customerId } : {}),
    ...(subscriptionId ? { stripe_subscription_id: subscriptionId } : {}),
  })
  const won = await sessions(db).updateOne(
    { _id: sessionId, status: { $ne: 'completed' } },
    { $set: { status: 'completed', completed_at: clock.now(), ...(customerId ? { customer_id: customerId } : {}), ...(subscriptionId ? { subscription_id: subscriptionId } : {}) } },
  )
  if (won.modifiedCount === 1) {
    await recordPlanChange(db, { _id: `checkout:${sessionId}`, account_id: account._id, service: record.service, from: account.plan, to: record.plan })
    if (previousSub && previousSub !== subscriptionId) await cancelSuperseded(platform, previousSub)
  }
  return { outcome: 'upgraded', account_id: account._id, plan: record.plan }
}

/** A new plan replaces the old subscription: stop billing the old one (best effort, logged). */
async function cancelSuperseded(platform: Platform, subscriptionId: string): Promise<void> {
  try {
    const sub = await withStripeRetry(() => stripeOf(platform).subscriptions.retrieve(subscriptionId))
    if (sub.status !== 'canceled' && sub.status !== 'incomplete_expired') {
      await withStripeRetry(() => stripeOf(platform).subscriptions.cancel(subscriptionId))
    }
  } catch (err) {
    logger.error({ subscriptionId, err: (err as Error).message }, 'could not cancel superseded subscription; cancel it in Stripe')
  }
}

export async function endSubscription(platform: Platform, subscriptionId: string): Promise<ReconcileResult> {
  const { db } = platform
  const record = await sessions(db).findOne({ subscription_id: subscriptionId })
  if (!record) return { outcome: 'unknown' }
  const sub = await withStripeRetry(() => stripeOf(platform).subscriptions.retrieve(subscriptionId))
  if (sub.status !== 'canceled' && sub.status !== 'incomplete_expired') return { outcome: 'still_active' }
  const account = await getAccount(db, record.account_id)
  if (!account || account.service !== record.service) return { outcome: 'mismatch' }
  // Only the subscription that pays for the current plan can end it (an upgrade cancels the old one).
  if (account.stripe_subscription_id !== subscriptionId) return { outcome: 'superseded' }
  if (account.plan === 'free') return { outcome: 'already_applied' }
  await setPlan(db, account._id, 'free')
  await recordPlanChange(db, { _id: `ended:${subscriptionId}`, account_id: account._id, service: record.service, from: account.plan, to: 'free' })
  return { outcome: 'downgraded', account_id: account._id }
}

/** Reconcile sessions still open after `afterMs` (least recently checked first). */
export async function sweepOpenSessions(platform: Platform, afterMs: number, max = 100): Promise<Record<string, number>> {
  const cutoff = new Date(clock.nowMs() - afterMs)
  const stale = await openSessionsBefore(platform.db, cutoff, max)
  const counts: Record<string, number> = {}
  for (const id of stale) {
    let outcome: string
    try {
      outcome = (await reconcileSession(platform, id)).outcome
    } catch (err) {
      logger.warn({ sessionId: id, err: (err as Error).message }, 'billing sweep: reconcile failed')
      outcome = 'error'
    }
    counts[outcome] = (counts[outcome] ?? 0) + 1
  }
  return counts
}

async function openSessionsBefore(db: Db, cutoff: Date, max: number): Promise<string[]> {
  const docs = await sessions(db).find({ status: 'open', created_at: { $lt: cutoff } }).sort({ checked_at: 1 }).limit(max).toArray()
  return docs.map((d) => d._id)
}
