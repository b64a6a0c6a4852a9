// Waiting (bounded) for the outcome of a job a request enqueued: the ingress side of invoice
// rendering and webhook replay. The outcome is read from MongoDB, the source of truth; the worker's
// wake (queues.ts) tells the waiter when to read, or hands it the outcome the processor has just
// stored (job.ts wakeWith), so a lost wake costs at most one poll.
import type { Platform } from '../platform.ts'
import type { JobSettled } from './queues.ts'

const POLL_MS = 1_000

export interface AwaitOutcomeOptions<T> {
  queue: string
  jobId: string
  /** Wall-clock bound on the whole wait. */
  timeoutMs: number
  /** The job's outcome as stored, or undefined while it is still pending. */
  read(): Promise<T | undefined>
  /** The outcome from what the processor handed over with its wake (undefined: read it). */
  fromWake?(payload: Buffer): T | undefined
  /**
   * A wait begun before the job was enqueued (listenForOutcome): saves a read of a document that
   * is certainly still pending, which on a latency path competes with the worker's own reads.
   */
  firstWait?: Promise<JobSettled | null>
  /**
   * Called every REPAIR_EVERY_MS while the job is pending: puts the job back when Redis lost it (a
   * failover that lost the last writes, a restart without its data). Must be idempotent (same job
   * id); its errors are ignored (the next call retries).
   */
  repair?(): Promise<void>
}

export const REPAIR_EVERY_MS = 2_000

/** Start listening for the job's next completion before enqueueing it (see firstWait). */
export function listenForOutcome(platform: Platform, queue: string, jobId: string, timeoutMs: number): Promise<JobSettled | null> {
  return platform.queues.nextSettled(queue, jobId, Math.min(timeoutMs, POLL_MS))
}

/** The outcome, or undefined when the time ran out with the job still pending. */
export async function awaitOutcome<T>(platform: Platform, opts: AwaitOutcomeOptions<T>): Promise<T | undefined> {
  const deadline = Date.now() + opts.timeoutMs
  let nextRepair = Date.now() + REPAIR_EVERY_MS
  let woken = opts.firstWait ? await opts.firstWait : null
  for (;;) {
    if (woken?.event === 'done' && woken.payload && opts.fromWake) {
      const outcome = opts.fromWake(woken.payload)
      if (outcome !== undefined) return outcome
    }
    if (opts.repair && Date.now() >= nextRepair && Date.now() < deadline) {
      nextRepair = Date.now() + REPAIR_EVERY_MS
      await opts.repair().catch(() => undefined)
    }
    // Listen before reading, so a job that settles between the read and the wait still wakes us
    // (otherwise a fast job could cost a whole poll interval).
    const left = deadline - Date.now()
    const settled = left > 0 ? platform.queues.nextSettled(opts.queue, opts.jobId, Math.min(left, POLL_MS)) : null
    const outcome = await opts.read()
    if (outcome !== undefined) return outcome
    if (!settled) return undefined
    woken = await settled
  }
}
