// Admission control for requests that wait on a queue's job (a single invoice waits for its
// render): refuse at once, with 503 and Retry-After, what cannot be served in time, instead of
// accepting it and letting it wait out its timeout. Two reasons: no worker consumes the queue (the
// workers are still starting, or none runs), or the jobs already waiting would take longer than
// the bound to start, at the rate the live workers report (consumers.ts). A refused request has
// changed nothing. docs/operations.md, "Worker presence and admission".
import { unavailable } from '../http/errors.ts'
import { logger } from '../logger.ts'
import type { Platform } from '../platform.ts'

/** Seconds a client is told to wait while no worker consumes the queue (a start takes a few). */
export const NO_WORKER_RETRY_S = 3

export const noWorkerMessage = (queue: string) =>
  `No worker is consuming ${queue} yet (the workers are starting, or none is running). Please retry in a few seconds; this request was not counted.`

/**
 * How old a queue's waiting count may be when a request is admitted. Reading it was a Redis round
 * trip per request; requests arriving within this time share one read, so a burst is seen at most
 * this much late (a fraction of any wait bound worth setting).
 */
export const WAITING_COUNT_MAX_AGE_MS = 100

const waitingReads = new WeakMap<Platform, Map<string, { at: number; count: Promise<number> }>>()

/** Jobs waiting in `queue`, read at most WAITING_COUNT_MAX_AGE_MS ago (callers share a read). */
function waitingJobs(platform: Platform, queue: string): Promise<number> {
  let reads = waitingReads.get(platform)
  if (!reads) waitingReads.set(platform, (reads = new Map()))
  const last = reads.get(queue)
  if (last && Date.now() - last.at < WAITING_COUNT_MAX_AGE_MS) return last.count
  const count = platform.queues
    .queue(queue)
    .getJobCounts('wait', 'prioritized')
    .then((c) => (c.wait ?? 0) + (c.prioritized ?? 0))
  // A failed read is not shared: the next request tries again.
  const read = { at: Date.now(), count }
  count.catch(() => reads.get(queue) === read && reads.delete(queue))
  reads.set(queue, read)
  return count
}

/** How long the jobs waiting in `queue` would take to start, in ms (0 when unknown or idle). */
export async function estimatedWaitMs(platform: Platform, queue: string): Promise<number> {
  const c = await platform.consumers.current(queue)
  if (c.workers === 0 || c.avgJobMs <= 0) return 0
  return ((await waitingJobs(platform, queue)) / Math.max(1, c.concurrency)) * c.avgJobMs
}

/**
 * Throw 503 + Retry-After unless a worker consumes `queue` and the queue's wait is within
 * `maxWaitMs` (0 = no bound). A Redis that cannot be read admits: the enqueue then meets the
 * outage and answers its own 503.
 */
export async function admitToQueue(platform: Platform, queue: string, maxWaitMs: number): Promise<void> {
  const consumers = await platform.consumers.current(queue)
  if (consumers.workers === 0) throw unavailable(noWorkerMessage(queue), NO_WORKER_RETRY_S)
  if (maxWaitMs <= 0) return
  let waitMs: number
  try {
    waitMs = await estimatedWaitMs(platform, queue)
  } catch {
    return
  }
  if (waitMs <= maxWaitMs) return
  const retryS = Math.min(60, Math.max(1, Math.ceil((waitMs - maxWaitMs) / 1000)))
  logger.debug({ queue, waitMs: Math.round(waitMs), maxWaitMs }, 'request refused: queue wait over its bound')
  throw unavailable(
    `Too busy: the ${queue} queue holds about ${Math.ceil(waitMs / 1000)} s of work, more than this request may wait (${Math.round(maxWaitMs / 1000)} s). Please retry in ${retryS} s; this request was not counted.`,
    retryS,
  )
}
