// The webhook-capture domain's job contracts: queue names, payload schemas, options and job ids,
// shared by the producers here (capture, retry, replay) and the processors in jobs/.
import { z } from 'zod'
import { defineJobContract } from '../platform/queue/job.ts'

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

/** After forwarding of an endpoint resumes: send the held requests one by one, in capture order. */
export const captureForwardResumeContract = defineJobContract({
  queue: 'capture-forward-resume',
  schema: z.object({ endpoint_id: z.string().min(1).max(64), resumed_at: z.number().int() }),
  options: { attempts: 5, backoff: { type: 'exponential', delay: 1_000 } },
  id: (p) => `resume-${p.endpoint_id}-${p.resumed_at}`,
})

/** Bulk recovery: a new forward round for every dead-lettered request of an endpoint since a time. */
export const captureRecoverContract = defineJobContract({
  queue: 'capture-recover',
  schema: z.object({ recovery_id: z.string().min(1).max(120) }),
  options: { attempts: 5, backoff: { type: 'exponential', delay: 1_000 } },
  id: (p) => p.recovery_id,
})

export const webhooksJobContracts = [captureForwardContract, captureReplayContract, capturesExpireContract, captureForwardResumeContract, captureRecoverContract]
