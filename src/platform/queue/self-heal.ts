// Redis may come back empty (a new instance, a lost volume, a flush, a failover that lost writes).
// Every worker process watches for it: every few seconds, and at once on each reconnect, it checks
//  - that the job schedulers of its queues exist, and re-creates any that are missing;
//  - a marker key per queue prefix (on a cluster, one per queue's hash tag, so the loss of one
//    shard is seen too). A missing marker means Redis lost its data since it was set: the process
//    that re-creates it first (SET NX, so one per loss) runs the recoveries, which re-enqueue
//    everything MongoDB says is accepted and not done. Job ids make a repeat add nothing new.
// The marker is also missing on the very first start against a fresh Redis; running the
// recoveries then is harmless (nothing is pending, or it was accepted while no worker ran).
import type { JobDefinition } from './job.ts'
import { randomId } from '../ids.ts'
import { logger } from '../logger.ts'
import type { Platform } from '../platform.ts'

/** One kind of accepted work re-enqueued from MongoDB; returns how many jobs it (re-)enqueued. */
export interface Requeue {
  name: string
  run(platform: Platform): Promise<number>
}

export interface SelfHeal {
  /** One check now (also what the timer and reconnects run). */
  check(): Promise<void>
  stop(): void
}

export const SELF_HEAL_INTERVAL_MS = 5_000

export function startSelfHeal(
  platform: Platform,
  opts: { jobs: JobDefinition[]; recoveries: Requeue[]; upsertScheduler: (def: JobDefinition) => Promise<void>; everyMs?: number },
): SelfHeal {
  const log = logger.child({ part: 'self-heal' })
  const markers = [...new Set(opts.jobs.map((j) => platform.queues.prefixOf(j.queue)))].map((p) => `${p}:alive`)
  let running: Promise<void> | null = null
  let stopped = false

  async function once(): Promise<void> {
    for (const def of opts.jobs) {
      if (!def.scheduler) continue
      if (!(await platform.queues.queue(def.queue).getJobScheduler(def.scheduler.id))) {
        log.warn({ scheduler: def.scheduler.id }, 'job scheduler missing in Redis: re-creating it')
        await opts.upsertScheduler(def)
      }
    }
    const epoch = `${Date.now()}-${randomId().slice(0, 6)}`
    const lost = (await Promise.all(markers.map((k) => platform.redis.set(k, epoch, 'NX')))).some((r) => r === 'OK')
    if (!lost) return
    log.warn('Redis has none of our markers (new, flushed or restored instance): re-enqueueing accepted work from MongoDB')
    for (const r of opts.recoveries) {
      try {
        const n = await r.run(platform)
        log.info({ recovery: r.name, enqueued: n }, 'recovered')
      } catch (err) {
        // Leave a marker-less state so the next check retries the recoveries.
        await Promise.allSettled(markers.map((k) => platform.redis.del(k)))
        throw err
      }
    }
  }

  const check = (): Promise<void> => {
    if (stopped) return Promise.resolve()
    running ??= once()
      .catch((err) => log.warn({ err: (err as Error).message }, 'self-heal check failed; retrying'))
      .finally(() => {
        running = null
      })
    return running
  }

  const timer = setInterval(() => void check(), opts.everyMs ?? SELF_HEAL_INTERVAL_MS)
  timer.unref()
  const onReady = () => void check()
  platform.redis.on('ready', onReady)
  return {
    check,
    stop() {
      stopped = true
      clearInterval(timer)
      platform.redis.off('ready', onReady)
    },
  }
}
