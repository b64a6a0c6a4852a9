// The webhook-capture domain's job contracts: queue names, payload schemas, options and job ids,
// shared by the producers here (capture, retry, replay) and the processors in jobs/.
import { z } from 'zod'
import { defineJobContract } from '../platform/job.ts'

/** One delivery attempt of a captured request to its endpoint's forward URL. */
export const captureForwardContract = defineJobContract({
  queue: 'capture-forward',
  schema: z.object({
    endpoint_id: z.string().min(1).max(64),
    request_id: z.number().int().min(1),
    /** 0 = the automatic schedule; each manual retry is a new round of one attempt. */
    round: z.number().int().min(0),
    attempt: z.number().int().min(1),
  }),
  // Delivery failures follow the forward schedule; these retries are for our own errors (MongoDB).
  options: { attempts: 3, backoff: { type: 'exponential', delay: 1_000 } },
  id: (r) => `fwd-${r.endpoint_id}-${r.request_id}-${r.round}-${r.attempt}`,
})
export type CaptureForwardPayload = z.infer<typeof captureForwardContract.schema>

/**
 * One replay of a stored request to a URL the caller chose; the ingress waits for it. No retries:
 * the caller is waiting and sees the outcome (a replay is repeated by asking again).
 */
export const captureReplayContract = defineJobContract({
  queue: 'capture-replay',
  schema: z.object({ replay_id: z.string().min(1).max(64) }),
  options: { attempts: 1 },
  id: (p) => p.replay_id,
})

/** Deletion of captures past retention and of expired endpoints (a scheduler, every 5 minutes). */
export const capturesExpireContract = defineJobContract({
  queue: 'captures-expire',
  schema: z.object({ batch: z.number().int().min(1).max(5_000).optional() }),
})

export const webhooksJobContracts = [captureForwardContract, captureReplayContract, capturesExpireContract]
