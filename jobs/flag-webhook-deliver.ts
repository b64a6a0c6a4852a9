// flag-webhook-deliver: one signed flag-change event to one webhook, retried with the contract's
// exponential backoff; every attempt is in the delivery log. A refused address (SSRF guard) or a
// malformed URL fails at once; after the last attempt the delivery is `failed` until POST …/retry.
import { defineJob, PermanentJobError } from '../src/platform/queue/job.ts'
import { flagWebhookDeliverContract } from '../src/flags/job-contracts.ts'
import { deliverOne } from '../src/flags/changes/change-hook-delivery.ts'

export const flagWebhookDeliverJob = defineJob(flagWebhookDeliverContract, {
  concurrency: 10,
  async process({ delivery_id, webhook_id, manual }, job, platform) {
    const r = await deliverOne(platform, webhook_id, delivery_id, manual ?? false, job)
    if (r.state !== 'pending' && r.state !== 'failed') return r
    if (r.permanent) throw new PermanentJobError(r.error ?? 'delivery failed')
    throw new Error(r.error ?? 'delivery failed')
  },
})
