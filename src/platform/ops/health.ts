// Liveness and readiness. /healthz: the process answers. /readyz: this process can WRITE to
// MongoDB and Redis, the job schedulers exist (a worker has started at least once), a live worker
// consumes every queue this service's requests wait on (consumers.ts: after a restart the
// schedulers are still in Redis while no worker runs yet), and the process is not draining. Writes, not pings: a master demoted by a failover still answers PING
// (and reads) but refuses every write with READONLY, and a process stuck on it must say so.
import { hostname } from 'node:os'
import type { JobDefinition } from '../queue/job.ts'
import { randomId } from '../ids.ts'
import { isClusterUrl } from '../redis/redis-target.ts'
import type { Platform } from '../platform.ts'
import { readConsumers } from '../queue/consumers.ts'
import { isDraining } from './lifecycle.ts'

const CHECK_TIMEOUT_MS = 2_000
/** This process's own probe keys and document, so replicas never mask each other's failures. */
const PROBE_ID = `${hostname()}:${process.pid}:${randomId().slice(0, 8)}`

export type CheckResult = 'ok' | string

function bounded<T>(p: Promise<T>): Promise<T> {
  return Promise.race([p, new Promise<T>((_, rej) => setTimeout(() => rej(new Error('timed out')), CHECK_TIMEOUT_MS).unref())])
}

async function check(fn: () => Promise<unknown>): Promise<CheckResult> {
  try {
    await bounded(fn())
    return 'ok'
  } catch (err) {
    return `failed: ${err instanceof Error ? err.message : String(err)}`
  }
}

export interface Readiness {
  ready: boolean
  checks: Record<'mongo' | 'redis' | 'schedulers' | 'workers' | 'accepting', CheckResult>
}

/** `awaits`: the queues whose jobs this service's requests wait for (ServiceDef.awaits). */
export async function readiness(platform: Platform, jobs: JobDefinition[], awaits: string[] = []): Promise<Readiness> {
  const [mongo, redis, schedulers, workers] = await Promise.all([
    check(() => platform.db.collection('ops_readiness').updateOne({ _id: PROBE_ID as never }, { $set: { at: new Date() } }, { upsert: true })),
    check(async () => {
      // On a cluster, one probe key per queue's hash tag: every shard this process's queues use.
      const keys = isClusterUrl(platform.redisUrl)
        ? [...new Set(jobs.map((j) => platform.queues.prefixOf(j.queue)))].map((p) => `${p}:ready:${PROBE_ID}`)
        : [`${platform.config.QUEUE_PREFIX}:ready:${PROBE_ID}`]
      await Promise.all(keys.map((k) => platform.redis.set(k, '1', 'PX', 10_000)))
    }),
    check(async () => {
      const missing: string[] = []
      for (const def of jobs) {
        if (def.scheduler && !(await platform.queues.queue(def.queue).getJobScheduler(def.scheduler.id))) missing.push(def.scheduler.id)
      }
      if (missing.length) throw new Error(`not registered yet: ${missing.join(', ')} (start a worker)`)
    }),
    check(async () => {
      // A fresh read, not the request path's cache: a probe is rare and must be exact.
      const idle: string[] = []
      for (const q of awaits) if ((await readConsumers(platform, q)).workers === 0) idle.push(q)
      if (idle.length) throw new Error(`no worker is consuming ${idle.join(', ')} (requests that wait on it get 503)`)
    }),
  ])
  const accepting = isDraining() ? 'failed: shutting down' : 'ok'
  const checks = { mongo, redis, schedulers, workers, accepting }
  return { ready: Object.values(checks).every((c) => c === 'ok'), checks }
}
