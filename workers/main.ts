// Worker process entry: registers the chosen queues' processors (all by default) with their
// concurrency, upserts job schedulers (and re-creates them, with the accepted work, when Redis
// comes back empty: self-heal.ts), and closes gracefully. Operators scale by running more of
// these, each with its own --queues and --concurrency.
import { JOBS } from '../jobs/index.ts'
import type { Platform } from '../src/platform/platform.ts'
import { closeWorkers, onJobProcessed, registerWorker, upsertScheduler, type RegisteredWorker } from '../src/platform/queue/workers.ts'
import { startHeartbeat } from '../src/platform/queue/consumers.ts'
import { startSelfHeal } from '../src/platform/queue/self-heal.ts'
import { REQUEUES } from '../jobs/requeues.ts'
import { closeRenderPool } from '../src/invoice/pdf/pool-render-threads.ts'
import { logger } from '../src/platform/logger.ts'

export interface WorkerOptions {
  /** Queue names to serve; empty = all. */
  queues?: string[]
  /** Concurrency for every chosen queue (default: each job's own). */
  concurrency?: number
}

export interface RunningWorkers {
  workers: RegisteredWorker[]
  close(timeoutMs?: number): Promise<void>
}

export async function startWorkers(platform: Platform, opts: WorkerOptions = {}): Promise<RunningWorkers> {
  const wanted = opts.queues?.length ? opts.queues : JOBS.map((j) => j.queue)
  const unknown = wanted.filter((q) => !JOBS.some((j) => j.queue === q))
  if (unknown.length) throw new Error(`unknown queue(s): ${unknown.join(', ')} (known: ${JOBS.map((j) => j.queue).join(', ')})`)
  // Warming (render threads) runs while the queues are registered.
  const warming = Promise.all(
    JOBS.filter((j) => wanted.includes(j.queue) && j.warmUp).map((j) =>
      j.warmUp!(platform).catch((err) => logger.warn({ queue: j.queue, err: (err as Error).message }, 'warm-up failed; the first job warms up instead')),
    ),
  )
  const workers: RegisteredWorker[] = []
  for (const def of JOBS.filter((j) => wanted.includes(j.queue))) {
    workers.push(await registerWorker(platform, def, { concurrency: opts.concurrency }))
  }
  await warming
  // Only now, with every chosen queue consumed, do requests that wait on them count on this process.
  const heartbeat = startHeartbeat(platform, workers.map((w) => ({ queue: w.queue, concurrency: w.worker.opts.concurrency ?? 1 })))
  const unhook = onJobProcessed((queue, _job, _outcome, ms) => heartbeat.jobDone(queue, ms))
  const chosen = JOBS.filter((j) => wanted.includes(j.queue))
  const heal = startSelfHeal(platform, { jobs: chosen, recoveries: REQUEUES, upsertScheduler: (def) => upsertScheduler(platform, def) })
  void heal.check()
  logger.info({ queues: workers.map((w) => w.queue), concurrency: opts.concurrency ?? 'per job' }, 'workers started')
  return {
    workers,
    async close(timeoutMs = platform.config.SHUTDOWN_TIMEOUT_MS) {
      heal.stop()
      unhook()
      // First: new requests stop counting on this process while it drains what it holds.
      await heartbeat.stop()
      // An API in this process learns it now; one in another process within its refresh (1 s).
      await platform.consumers.refresh()
      await closeWorkers(workers, timeoutMs)
      await closeRenderPool()
    },
  }
}
