// capture-forward: one delivery attempt of a captured request to its endpoint's forward URL.
// A failed attempt schedules the next one (DESIGN.md §7 schedule, WEBHOOK_FORWARD_SCHEDULE_MS)
// as a delayed job with its own id; after the last, the delivery is dead-lettered. Every next
// attempt goes through the outbox, so a Redis hiccup between attempts loses nothing.
import { z } from 'zod'
import { clock } from '../src/platform/clock.ts'
import type { Config } from '../src/platform/config.ts'
import { defineJob } from '../src/platform/job.ts'
import { isDuplicateKey } from '../src/platform/mongo.ts'
import { enqueueDurably } from '../src/platform/outbox.ts'
import type { Platform } from '../src/platform/platform.ts'
import { QueueName } from '../src/platform/queue-names.ts'
import { forwardAttempt, markDead, markRetryAt, type ForwardRef } from '../src/webhooks/forward.ts'

export const captureForwardPayload = z.object({
  endpoint_id: z.string().min(1).max(64),
  request_id: z.number().int().min(1),
  /** 0 = the automatic schedule; each manual retry is a new round of one attempt. */
  round: z.number().int().min(0),
  attempt: z.number().int().min(1),
})
export type CaptureForwardPayload = z.infer<typeof captureForwardPayload>

/** Delay before each attempt, in ms; its length is the number of automatic attempts. */
export function forwardSchedule(config: Config): number[] {
  return config.WEBHOOK_FORWARD_SCHEDULE_MS.split(',').map(Number)
}

const jobId = (r: ForwardRef) => `fwd-${r.endpoint_id}-${r.request_id}-${r.round}-${r.attempt}`

/** Enqueue an attempt durably. Enqueuing the same attempt twice is harmless (same job id). */
export async function scheduleForward(platform: Platform, ref: CaptureForwardPayload, delayMs: number): Promise<void> {
  try {
    await enqueueDurably(platform, captureForwardJob, ref, jobId(ref), delayMs > 0 ? { delay: delayMs } : {})
  } catch (err) {
    if (!isDuplicateKey(err)) throw err // already in the outbox: the sweep will enqueue it
  }
}

export const captureForwardJob = defineJob({
  queue: QueueName.CaptureForward,
  schema: captureForwardPayload,
  // Delivery failures follow the schedule above; these retries are for our own errors (MongoDB).
  options: { attempts: 3, backoff: { type: 'exponential', delay: 1_000 } },
  concurrency: 20,
  async process(ref, _job, platform) {
    const outcome = await forwardAttempt(platform, ref)
    if (outcome !== 'failed') return { outcome }
    const schedule = ref.round === 0 ? forwardSchedule(platform.config) : [0]
    if (ref.attempt >= schedule.length) {
      await markDead(platform, ref)
      return { outcome: 'dead' }
    }
    const delay = schedule[ref.attempt]!
    await markRetryAt(platform, ref, new Date(clock.nowMs() + delay))
    await scheduleForward(platform, { ...ref, attempt: ref.attempt + 1 }, delay)
    return { outcome, next_in_ms: delay }
  },
})
