// payment-reconcile: confirms with Stripe what a webhook announced (a paid checkout session, an
// ended subscription) and applies it; the same queue's scheduler sweeps checkout sessions still
// open after BILLING_SWEEP_AFTER_MS, so a lost webhook never loses a paid upgrade. Idempotent.
import { defineJob } from '../src/platform/queue/job.ts'
import { paymentReconcileContract } from '../src/platform/billing/job-contracts.ts'
import { endSubscription, reconcileSession, sweepOpenSessions } from '../src/platform/billing/reconcile.ts'

export const paymentReconcileJob = defineJob(paymentReconcileContract, {
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
