// The one place that builds queues: one Queue and one QueueEvents per queue per process, created
// at start, with default job options, and one completed/failed listener per queue that feeds a
// map of job id → waiters (job.waitUntilFinished adds listeners per call and can miss events).
import { queueTelemetry } from './tracing.ts'
import { Queue, QueueEvents, type JobsOptions } from 'bullmq'
import { logger } from './logger.ts'
import { createRedis, type RedisClient } from './redis.ts'
import { isRedisConnectionError, watchBullmqErrors } from './redis-errors.ts'
import { isClusterUrl, queuePrefixFor } from './redis-target.ts'

/** Defaults for every job: keep Redis small, keep recent failures for the dashboard. */
export const DEFAULT_JOB_OPTIONS: JobsOptions = {
  removeOnComplete: { age: 3_600, count: 1_000 },
  removeOnFail: { age: 7 * 24 * 3_600, count: 5_000 },
}

export type JobSettled = { event: 'completed'; returnvalue: unknown } | { event: 'failed'; failedReason: string }

type Waiter = (s: JobSettled) => void

export class QueueRegistry {
  private readonly queues = new Map<string, Queue>()
  private readonly events = new Map<string, { ev: QueueEvents; conn: RedisClient }>()
  private readonly waiters = new Map<string, Set<Waiter>>()

  constructor(
    private readonly redisUrl: string,
    private readonly prefix: string,
    /** Fail-fast connection shared by every Queue (producers). */
    private readonly producer: RedisClient,
  ) {}

  /** BullMQ prefix of a queue: QUEUE_PREFIX, plus the queue's own hash tag on a cluster. */
  prefixOf(name: string): string {
    return queuePrefixFor(this.prefix, name, isClusterUrl(this.redisUrl))
  }

  queue(name: string): Queue {
    let q = this.queues.get(name)
    if (!q) {
      q = new Queue(name, { connection: this.producer, prefix: this.prefixOf(name), defaultJobOptions: DEFAULT_JOB_OPTIONS, telemetry: queueTelemetry() })
      // Connection errors are the shared producer connection's own, logged once by it (redis.ts).
      q.on('error', (err) => {
        if (!isRedisConnectionError(err)) logger.warn({ err: err.message, queue: name }, 'queue error')
      })
      this.queues.set(name, q)
    }
    return q
  }

  /**
   * Open these queues now, while Redis is up. A BullMQ Queue first opened during an outage waits
   * for Redis before failing or adding anything, so a request needing it would hang instead of
   * falling back to the outbox; queues opened at start fail fast like the connection they share.
   */
  async open(names: string[]): Promise<void> {
    await Promise.all(names.map((n) => this.queue(n).waitUntilReady()))
  }

  /** Start listening for completions of `name` (call at start for queues whose results are awaited). */
  async listen(name: string): Promise<void> {
    if (this.events.has(name)) return
    const conn = createRedis(this.redisUrl, 'blocking')
    const ev = new QueueEvents(name, {
      connection: conn,
      prefix: this.prefixOf(name),
      autorun: true,
    })
    watchBullmqErrors(ev, conn, { queue: name, redis: 'queue-events' }, 'queue events error')
    ev.on('completed', ({ jobId, returnvalue }) => this.settle(name, jobId, { event: 'completed', returnvalue }))
    ev.on('failed', ({ jobId, failedReason }) => this.settle(name, jobId, { event: 'failed', failedReason }))
    this.events.set(name, { ev, conn })
    await ev.waitUntilReady()
  }

  private settle(name: string, jobId: string, s: JobSettled): void {
    const set = this.waiters.get(`${name}:${jobId}`)
    if (!set) return
    for (const w of set) w(s)
  }

  /**
   * Resolve with the next completed/failed event of the job, or null after timeoutMs.
   * A null is not a verdict: callers look the result up in MongoDB, the source of truth.
   */
  nextSettled(name: string, jobId: string, timeoutMs: number): Promise<JobSettled | null> {
    if (!this.events.has(name)) throw new Error(`queue ${name} is not listened to in this process`)
    const key = `${name}:${jobId}`
    return new Promise((resolve) => {
      let set = this.waiters.get(key)
      if (!set) this.waiters.set(key, (set = new Set()))
      const done = (s: JobSettled | null) => {
        clearTimeout(timer)
        set!.delete(done)
        if (set!.size === 0) this.waiters.delete(key)
        resolve(s)
      }
      const timer = setTimeout(() => done(null), timeoutMs)
      set.add(done)
    })
  }

  async close(): Promise<void> {
    await Promise.allSettled(
      [...this.events.values()].map(async ({ ev, conn }) => {
        await ev.close()
        conn.disconnect()
      }),
    )
    await Promise.allSettled([...this.queues.values()].map((q) => q.close()))
    this.events.clear()
    this.queues.clear()
  }
}
