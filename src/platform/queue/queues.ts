// The one place that builds queues: one Queue per queue per process, created at start, with
// default job options, and what wakes a request waiting for a job (job.waitUntilFinished adds
// listeners per call and can miss events): a map of job id → waiters fed by this process's own
// wake channel (a job enqueued to be awaited names it, and the worker publishes the job id there
// when its processor is done: docs/architecture.md, "Waiting for a job"), or by a QueueEvents
// stream of every event of a queue where a caller wants those (tests, scripts).
import { queueTelemetry } from '../tracing.ts'
import { Queue, QueueEvents, type JobsOptions } from 'bullmq'
import { logger } from '../logger.ts'
import { createRedis, type RedisClient } from '../redis/redis.ts'
import { isRedisConnectionError, watchBullmqErrors } from '../redis/redis-errors.ts'
import { isClusterUrl, queuePrefixFor } from '../redis/redis-target.ts'
import { randomId } from '../ids.ts'

/** Defaults for every job: keep Redis small, keep recent failures for the dashboard. */
export const DEFAULT_JOB_OPTIONS: JobsOptions = {
  removeOnComplete: { age: 3_600, count: 1_000 },
  removeOnFail: { age: 7 * 24 * 3_600, count: 5_000 },
}

/**
 * What woke a waiter: a completed or failed event of the queue's event stream, or this process's
 * wake channel ('done': the job's processor returned or threw; the outcome is where it stores it,
 * and `payload` what the processor handed the waiter with the wake: job.ts wakeWith).
 */
export type JobSettled = { event: 'completed'; returnvalue: unknown } | { event: 'failed'; failedReason: string } | { event: 'done'; payload?: Buffer }

/** The job data field naming the wake channel of the process that awaits the job (job.ts, workers.ts). */
export const WAKE_FIELD = '_wake'

/**
 * What a worker publishes on a wake channel: the queue and the job id, each ended by a newline,
 * then the bytes the processor handed the waiter, if any (job.ts wakeWith). Binary: a rendered
 * PDF travels as it is, without an encoding on either side.
 */
export function wakeMessage(queue: string, jobId: string, payload?: Buffer): Buffer {
  const head = Buffer.from(`${queue}\n${jobId}\n`)
  return payload?.length ? Buffer.concat([head, payload], head.length + payload.length) : head
}

/**
 * The queue, job id and payload of a wake message; null when it is not one. A message without the
 * job id's newline is an earlier version's worker's (queue and job id only).
 */
export function parseWake(message: Buffer): { queue: string; jobId: string; payload?: Buffer } | null {
  const a = message.indexOf(10)
  if (a <= 0) return null
  const b = message.indexOf(10, a + 1)
  const end = b < 0 ? message.length : b
  if (end === a + 1) return null
  const payload = b >= 0 && b + 1 < message.length ? message.subarray(b + 1) : undefined
  return { queue: message.toString('utf8', 0, a), jobId: message.toString('utf8', a + 1, end), ...(payload ? { payload } : {}) }
}

type Waiter = (s: JobSettled) => void

export class QueueRegistry {
  private readonly queues = new Map<string, Queue>()
  private readonly events = new Map<string, { ev: QueueEvents; conn: RedisClient }>()
  private readonly waiters = new Map<string, Set<Waiter>>()
  private wakes: { channel: string; conn: RedisClient; subscribed: Promise<unknown> } | null = null

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

  /**
   * Subscribe to this process's wake channel (call at start in a process whose requests await
   * jobs). One subscription per process, whatever the queues: a job wakes only the process that
   * awaits it, where a queue's event stream wakes every process listening to it for every event
   * of every job (three or four per job). A wake lost to a failover or a reconnect costs the
   * waiter one poll (await-outcome.ts).
   */
  async listenForWakes(): Promise<void> {
    // Services started side by side (Promise.all) each call this: every caller waits for the one
    // subscription, so none serves requests before its wakes can arrive.
    if (!this.wakes) {
      const channel = `${this.prefix}:wake:${randomId()}`
      const conn = createRedis(this.redisUrl, 'blocking', { connectionName: 'wakes' })
      conn.on('messageBuffer', (ch: Buffer, message: Buffer) => {
        if (ch.toString() !== channel) return
        const wake = parseWake(message)
        if (wake) this.settle(wake.queue, wake.jobId, wake.payload ? { event: 'done', payload: wake.payload } : { event: 'done' })
      })
      this.wakes = { channel, conn, subscribed: conn.subscribe(channel) }
    }
    await this.wakes.subscribed
  }

  /** This process's wake channel, once listenForWakes has run. */
  wakeChannel(): string | undefined {
    return this.wakes?.channel
  }

  private settle(name: string, jobId: string, s: JobSettled): void {
    const set = this.waiters.get(`${name}:${jobId}`)
    if (!set) return
    for (const w of set) w(s)
  }

  /**
   * Resolve with the job's next wake (its processor done, for a job enqueued with this process's
   * wake channel) or completed/failed event (a queue listened to), or null after timeoutMs.
   * Neither is a verdict: callers look the result up in MongoDB, the source of truth, unless the
   * processor handed them what they need with the wake (job.ts wakeWith).
   */
  nextSettled(name: string, jobId: string, timeoutMs: number): Promise<JobSettled | null> {
    if (!this.wakes && !this.events.has(name)) throw new Error(`queue ${name} is not listened to in this process`)
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
    this.wakes?.conn.disconnect()
    this.wakes = null
    await Promise.allSettled([...this.queues.values()].map((q) => q.close()))
    this.events.clear()
    this.queues.clear()
  }
}
