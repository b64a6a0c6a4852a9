// The one place that registers workers: payload validation, logging, error handling, scheduler
// upserts and a bounded graceful close are the same for every queue.
import { Worker, type Job } from 'bullmq'
import { queueTelemetry } from '../tracing.ts'
import type { JobDefinition } from './job.ts'
import { PermanentJobError, takeWakePayload } from './job.ts'
import { logger } from '../logger.ts'
import type { Platform } from '../platform.ts'
import { createRedis, type RedisClient } from '../redis/redis.ts'
import { watchBullmqErrors } from '../redis/redis-errors.ts'
import { WAKE_FIELD, wakeMessage } from './queues.ts'

export interface RegisteredWorker {
  queue: string
  worker: Worker
  connection: RedisClient
}

export type JobHook = (queue: string, job: Job, outcome: 'completed' | 'failed', ms: number) => void
const hooks: JobHook[] = []
/** Observers (metrics, worker heartbeats) of every processed job; returns the unsubscribe. */
export function onJobProcessed(h: JobHook): () => void {
  hooks.push(h)
  return () => {
    const i = hooks.indexOf(h)
    if (i >= 0) hooks.splice(i, 1)
  }
}

export async function registerWorker(
  platform: Platform,
  def: JobDefinition,
  opts: { concurrency?: number } = {},
): Promise<RegisteredWorker> {
  const log = logger.child({ queue: def.queue })
  const connection = createRedis(platform.redisUrl, 'blocking')
  const lockMs = def.lockMs?.(platform.config) ?? platform.config.JOB_LOCK_MS
  const worker = new Worker(
    def.queue,
    async (job) => {
      const parsed = def.schema.safeParse(job.data)
      if (!parsed.success) throw new PermanentJobError(`invalid payload: ${parsed.error.issues[0]?.message}`)
      const started = performance.now()
      try {
        const result = await def.process(parsed.data, job, platform)
        for (const h of hooks) h(def.queue, job, 'completed', performance.now() - started)
        return result
      } catch (err) {
        for (const h of hooks) h(def.queue, job, 'failed', performance.now() - started)
        throw err
      } finally {
        wakeWaiter(platform, def.queue, job)
      }
    },
    {
      connection,
      prefix: platform.queues.prefixOf(def.queue),
      concurrency: opts.concurrency ?? (typeof def.concurrency === 'function' ? def.concurrency(platform.config) : def.concurrency) ?? 1,
      // A dead worker's job is taken over at most lock + stall interval after its last renewal
      // (renewals come every lock/2): within 8 s + 2 s of the death by default (docs/operations.md,
      // "Worker death"). The check is one small Lua script per worker per interval.
      lockDuration: lockMs,
      stalledInterval: Math.max(1_000, Math.floor(lockMs / 4)),
      maxStalledCount: 2,
      // The consumer span of each job continues the trace of the request that enqueued it.
      telemetry: queueTelemetry(),
    },
  )
  worker.on('failed', (job, err) => log.warn({ jobId: job?.id, attempt: job?.attemptsMade, err: err.message }, 'job failed'))
  watchBullmqErrors(worker, connection, { queue: def.queue, redis: 'worker' }, 'worker error')
  await upsertScheduler(platform, def)
  await worker.waitUntilReady()
  return { queue: def.queue, worker, connection }
}

/**
 * Tell the process awaiting this job (if one named its wake channel: job.ts enqueueAwaited) that
 * the processor is done, so it reads the outcome now rather than at its next poll, or takes it
 * from the wake when the processor handed it one (job.ts wakeWith). Sent before BullMQ records the
 * completion: the outcome a waiter reads is what the processor stored, which is there already.
 * Not awaited, and a failure only costs the waiter its poll.
 */
function wakeWaiter(platform: Platform, queue: string, job: Job): void {
  const payload = takeWakePayload(job)
  const channel = (job.data as Record<string, unknown> | undefined)?.[WAKE_FIELD]
  if (typeof channel !== 'string' || job.id === undefined) return
  platform.redis.publish(channel, wakeMessage(queue, job.id, payload)).catch(() => undefined)
}

/** Create or update the job's scheduler, if it has one (at start, and when Redis lost it: self-heal.ts). */
export async function upsertScheduler(platform: Platform, def: JobDefinition): Promise<void> {
  if (!def.scheduler) return
  const { id, every, pattern, payload } = def.scheduler
  await platform.queues
    .queue(def.queue)
    .upsertJobScheduler(id, every ? { every } : { pattern, tz: 'UTC' }, { name: def.queue, data: payload, opts: def.options })
}

/** Resolve 'done' when `p` settles, or 'timeout' after `ms`. */
async function within(p: Promise<unknown>, ms: number): Promise<'done' | 'timeout'> {
  let timer: NodeJS.Timeout | undefined
  const t = new Promise<'timeout'>((r) => (timer = setTimeout(() => r('timeout'), ms)))
  try {
    return await Promise.race([p.then(() => 'done' as const), t])
  } finally {
    clearTimeout(timer)
  }
}

/**
 * Close workers, letting active jobs finish for at most timeoutMs, then drop their connections.
 * (BullMQ's close() is memoized: a close(true) after close() returns the same promise and forces
 * nothing. And after a cluster master failover a worker's close could wait for ever on its blocking
 * connection to the dead node.) An interrupted job is taken over once its lock expires.
 */
export async function closeWorkers(workers: RegisteredWorker[], timeoutMs: number): Promise<void> {
  const closing = Promise.allSettled(workers.map((w) => w.worker.close()))
  if ((await within(closing, timeoutMs)) === 'timeout') {
    logger.warn('workers did not finish in time; dropping their connections')
    await within(Promise.allSettled(workers.map((w) => w.worker.disconnect())), 2_000)
  }
  for (const w of workers) w.connection.disconnect()
}
