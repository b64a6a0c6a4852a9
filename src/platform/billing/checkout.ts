// Creating a Stripe Checkout Session (subscription) for an account's chosen plan, and recording it
// so the webhook and the sweep know which account it is for. Stripe failures become a 503.
import type { Account } from '../accounts.ts'
import { HttpError } from '../http/errors.ts'
import { randomId } from '../ids.ts'
import { logger } from '../logger.ts'
import type { Platform } from '../platform.ts'
import { PRICES_USD, type PaidPlan, type Service } from '../plans.ts'
import { recordSession } from './billing-store.ts'
import { isTransientStripeError, withStripeRetry, type Stripe } from './stripe-client.ts'

export const UNAVAILABLE = 'Payment system unavailable, please try again later'

const PRODUCT: Record<Service, string> = { invoice: 'Invoice API', flags: 'Feature Flags', webhooks: 'Webhook Capture' }
const title = (s: string) => s[0]!.toUpperCase() + s.slice(1)

export const paymentUnavailable = () => new HttpError(503, UNAVAILABLE, { 'Retry-After': '30' })

function lineItem(platform: Platform, service: Service, plan: PaidPlan): Stripe.Checkout.SessionCreateParams.LineItem {
  const price = platform.config.STRIPE_PRICE_IDS?.[service]?.[plan]
  if (price) return { price, quantity: 1 }
  return {
    quantity: 1,
    price_data: {
      currency: 'usd',
      unit_amount: PRICES_USD[service][plan] * 100,
      recurring: { interval: 'month' },
      product_data: { name: `${PRODUCT[service]} ${title(plan)}` },
    },
  }
}

/** `origin` is the service's public address (host root); Stripe sends the payer back there. */
export async function createCheckout(platform: Platform, account: Account, service: Service, plan: PaidPlan, origin: string): Promise<string> {
  const stripe = platform.stripe
  if (!stripe) throw paymentUnavailable()
  const metadata = { account_id: account._id, service, plan }
  const params: Stripe.Checkout.SessionCreateParams = {
    mode: 'subscription',
    line_items: [lineItem(platform, service, plan)],
    client_reference_id: account._id,
    metadata,
    // Carried by the subscription, so its end can be traced to the account.
    subscription_data: { metadata },
    ...(account.stripe_customer_id ? { customer: account.stripe_customer_id } : { customer_email: account.email }),
    success_url: `${origin}/api/v1/billing/success?session_id={CHECKOUT_SESSION_ID}`,
    cancel_url: `${origin}/api/v1/billing/cancel`,
  }
  // One key for every retry of this request: a retried create never makes two sessions.
  const idempotencyKey = `checkout-${randomId()}`
  let session: Stripe.Checkout.Session
  try {
    session = await withStripeRetry(() => stripe.checkout.sessions.create(params, { idempotencyKey }))
  } catch (err) {
    const level = isTransientStripeError(err) ? 'warn' : 'error'
    logger[level]({ service, err: (err as Error).message }, 'stripe checkout session create failed')
    throw paymentUnavailable()
  }
  if (!session.url) throw paymentUnavailable()
  await recordSession(platform.db, { _id: session.id, account_id: account._id, service, plan })
  return session.url
}
