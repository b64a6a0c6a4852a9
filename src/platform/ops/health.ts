// Liveness and readiness. /healthz: the process answers. /readyz: MongoDB and Redis answer, the
// job schedulers exist (a worker has started at least once), and the process is not draining.
import type { JobDefinition } from '../job.ts'
import type { Platform } from '../platform.ts'
import { isDraining } from './lifecycle.ts'

const CHECK_TIMEOUT_MS = 2_000

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
  checks: Record<'mongo' | 'redis' | 'schedulers' | 'accepting', CheckResult>
}

export async function readiness(platform: Platform, jobs: JobDefinition[]): Promise<Readiness> {
  const [mongo, redis, schedulers] = await Promise.all([
    check(() => platform.db.command({ ping: 1 })),
    check(async () => {
      if ((await platform.redis.ping()) !== 'PONG') throw new Error('unexpected PING reply')
    }),
    check(async () => {
      const missing: string[] = []
      for (const def of jobs) {
        if (def.scheduler && !(await platform.queues.queue(def.queue).getJobScheduler(def.scheduler.id))) missing.push(def.scheduler.id)
      }
      if (missing.length) throw new Error(`not registered yet: ${missing.join(', ')} (start a worker)`)
    }),
  ])
  const accepting = isDraining() ? 'failed: shutting down' : 'ok'
  const checks = { mongo, redis, schedulers, accepting }
  return { ready: Object.values(checks).every((c) => c === 'ok'), checks }
}
