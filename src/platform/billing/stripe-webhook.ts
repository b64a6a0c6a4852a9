// POST /api/v1/billing/stripe-webhook: verifies Stripe-Signature over the raw bytes, handles each
// event once per service (every service's endpoint receives every event of the Stripe account,
// and acts only on its own), and hands the work to payment-reconcile through the outbox.
import type { Context } from 'koa'
import { clock } from '../clock.ts'
import { badRequest } from '../http/errors.ts'
import { readDecodedBody } from '../http/content-encoding.ts'
import { enqueueDurably } from '../queue/outbox.ts'
import type { Platform } from '../platform.ts'
import { paymentUnavailable } from './checkout.ts'
import { paymentReconcileContract, type PaymentReconcilePayload } from './job-contracts.ts'
import type { Service } from '../plans.ts'
import { forgetEvent, recordEvent } from './billing-store.ts'
import type { Stripe } from './stripe-client.ts'

export const WEBHOOK_PATH = '/api/v1/billing/stripe-webhook'
const MAX_BODY = 512 * 1024
/** Stripe's own default: a signature older than this is a replay. */
const TOLERANCE_SEC = 300

/** What an event asks of this service, or null when it is not for it. */
function actionFor(event: Stripe.Event, service: Service): PaymentReconcilePayload | null {
  const obj = event.data.object as { id?: string; metadata?: Record<string, string> | null }
  if (obj.metadata?.service !== service || typeof obj.id !== 'string') return null
  switch (event.type) {
    case 'checkout.session.completed':
    case 'checkout.session.async_payment_succeeded':
      return { kind: 'checkout', session_id: obj.id }
    case 'customer.subscription.deleted':
      return { kind: 'subscription_ended', subscription_id: obj.id }
    default:
      return null
  }
}

export function stripeWebhook(platform: Platform, service: Service) {
  return async (ctx: Context) => {
    const secret = platform.config.STRIPE_WEBHOOK_SECRET
    if (!platform.stripe || !secret) throw paymentUnavailable()
    // Stripe signs the payload; a Content-Encoding (a proxy's, say) is undone before checking it.
    const body = await readDecodedBody(ctx, MAX_BODY)
    const signature = ctx.get('stripe-signature')
    if (!signature) throw badRequest('Missing Stripe-Signature header')
    let event: Stripe.Event
    try {
      event = platform.stripe.webhooks.constructEvent(body, signature, secret, TOLERANCE_SEC, undefined, clock.nowMs())
    } catch {
      throw badRequest('Invalid Stripe signature')
    }
    const action = actionFor(event, service)
    if (!action) {
      ctx.body = { received: true, handled: false }
      return
    }
    if (!(await recordEvent(platform.db, service, event.id, event.type))) {
      ctx.body = { received: true, duplicate: true }
      return
    }
    try {
      // Safe for BullMQ job ids (no ':'): one job per event per service.
      await enqueueDurably(platform, paymentReconcileContract, action, { jobId: `evt-${service}-${event.id}` })
    } catch (err) {
      // Not recorded anywhere durable: let Stripe's redelivery try again.
      await forgetEvent(platform.db, service, event.id).catch(() => undefined)
      throw err
    }
    ctx.body = { received: true }
  }
}
