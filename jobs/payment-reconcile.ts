// payment-reconcile: confirms with Stripe what a webhook announced (a paid checkout session, an
// ended subscription) and applies it; the same queue's scheduler sweeps checkout sessions still
// open after BILLING_SWEEP_AFTER_MS, so a lost webhook never loses a paid upgrade. Idempotent.
import { z } from 'zod'
import { defineJob } from '../src/platform/job.ts'
import { QueueName } from '../src/platform/queue-names.ts'
import { endSubscription, reconcileSession, sweepOpenSessions } from '../src/platform/billing/reconcile.ts'

const stripeId = (prefix: string) => z.string().regex(new RegExp(`^${prefix}_[A-Za-z0-9_]{1,250}$`))

export const paymentReconcilePayload = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('checkout'), session_id: stripeId('cs') }),
  z.object({ kind: z.literal('subscription_ended'), subscription_id: stripeId('sub') }),
  /** after_ms overrides BILLING_SWEEP_AFTER_MS (operators, tests). */
  z.object({ kind: z.literal('sweep'), after_ms: z.number().int().min(0).optional() }),
])
export type PaymentReconcilePayload = z.infer<typeof paymentReconcilePayload>

export const paymentReconcileJob = defineJob({
  queue: QueueName.PaymentReconcile,
  schema: paymentReconcilePayload,
  // Stripe may be down for a while: keep trying for about an hour (the sweep covers longer).
  options: { attempts: 10, backoff: { type: 'exponential', delay: 2_000 } },
  concurrency: 4,
  scheduler: { id: 'payment-reconcile-sweep', every: 60_000, payload: { kind: 'sweep' } },
  async process(payload, _job, platform) {
    if (payload.kind === 'sweep') {
      if (!platform.stripe) return { skipped: 'billing is not configured' }
      return sweepOpenSessions(platform, payload.after_ms ?? platform.config.BILLING_SWEEP_AFTER_MS)
    }
    if (payload.kind === 'checkout') return reconcileSession(platform, payload.session_id)
    return endSubscription(platform, payload.subscription_id)
  },
})
