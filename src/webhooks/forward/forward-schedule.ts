// When forward attempts happen: the schedule (docs/webhooks.md, "Decisions where the spec is
// silent"; WEBHOOK_FORWARD_SCHEDULE_MS) and the
// durable enqueue of one attempt, used by the capture, the manual retry and the forward job itself.
import type { Config } from '../../platform/config.ts'
import { isDuplicateKey } from '../../platform/store/mongo.ts'
import { enqueueDurably } from '../../platform/queue/outbox.ts'
import type { Platform } from '../../platform/platform.ts'
import { captureForwardContract, type CaptureForwardPayload } from '../job-contracts.ts'

/** Delay before each attempt, in ms; its length is the number of automatic attempts. */
export function forwardSchedule(config: Config): number[] {
  return config.WEBHOOK_FORWARD_SCHEDULE_MS.split(',').map(Number)
}

/**
 * Enqueue an attempt durably (through the outbox, so a Redis hiccup between attempts loses
 * nothing). Enqueuing the same attempt twice is harmless: the job id is the attempt's.
 */
export async function scheduleForward(platform: Platform, ref: CaptureForwardPayload, delayMs: number): Promise<void> {
  try {
    await enqueueDurably(platform, captureForwardContract, ref, delayMs > 0 ? { delay: delayMs } : {})
  } catch (err) {
    if (!isDuplicateKey(err)) throw err // already in the outbox: the sweep will enqueue it
  }
}
