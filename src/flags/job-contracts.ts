// The feature-flag domain's job contracts: fanning a recorded change out to the project's
// webhooks, delivering one signed event with retries, and the history sweep (settle pending
// entries, re-dispatch, retention). Produced here (audit.ts, webhook routes), processed in jobs/.
import { z } from 'zod'
import { defineJobContract } from '../platform/queue/job.ts'

const id = z.string().min(1).max(128)

/** One committed change → one delivery per matching webhook. Retried while its entry is still pending. */
export const flagChangeDispatchContract = defineJobContract({
  queue: 'flag-change-dispatch',
  schema: z.object({ change_id: id, project_id: id }),
  options: { attempts: 8, backoff: { type: 'exponential', delay: 500 } },
  id: (p) => p.change_id,
})

/** One signed event to one webhook: exponential from 1 s over 10 attempts (1 s … 256 s, ≈ 8.5 minutes in all). */
export const flagWebhookDeliverContract = defineJobContract({
  queue: 'flag-webhook-deliver',
  schema: z.object({ delivery_id: id, webhook_id: id, /** Queued by POST …/retry (its attempts are marked manual). */ manual: z.boolean().optional() }),
  options: { attempts: 10, backoff: { type: 'exponential', delay: 1_000 } },
  id: (p) => p.delivery_id,
})

/** Every minute (a scheduler): settle pending history entries, re-dispatch what was not, apply retention. */
export const flagHistorySweepContract = defineJobContract({
  queue: 'flag-history-sweep',
  schema: z.object({ min_age_ms: z.number().int().min(0).optional() }),
})

export const flagsJobContracts = [flagChangeDispatchContract, flagWebhookDeliverContract, flagHistorySweepContract]
