// Billing's job contract: payment-reconcile confirms with Stripe what a webhook announced, or
// sweeps checkout sessions still open. Produced by the Stripe webhook (through the outbox) and a
// scheduler; processed by jobs/payment-reconcile.ts.
import { z } from 'zod'
import { defineJobContract } from '../queue/job.ts'

const stripeId = (prefix: string) => z.string().regex(new RegExp(`^${prefix}_[A-Za-z0-9_]{1,250}$`))

export const paymentReconcileContract = defineJobContract({
  queue: 'payment-reconcile',
  schema: z.discriminatedUnion('kind', [
    z.object({ kind: z.literal('checkout'), session_id: stripeId('cs') }),
    z.object({ kind: z.literal('subscription_ended'), subscription_id: stripeId('sub') }),
    /** after_ms overrides BILLING_SWEEP_AFTER_MS (operators, tests). */
    z.object({ kind: z.literal('sweep'), after_ms: z.number().int().min(0).optional() }),
  ]),
  // Stripe may be down for a while: keep trying for about an hour (the sweep covers longer).
  options: { attempts: 10, backoff: { type: 'exponential', delay: 2_000 } },
})
export type PaymentReconcilePayload = z.infer<typeof paymentReconcileContract.schema>
