// Preloaded into a worker process by bench:forward-overload (`node --import tsx --import <this>`):
// measures what BullMQ's lock renewal depends on, from inside the process whose locks expire —
// event-loop delay, Redis round trips on a connection of its own, and per job the age of its lock
// at each renewal (from BullMQ's LockManager). Writes a JSON summary to LOCK_PROBE_OUT every
// second. Bench-only instrumentation: nothing of the application is replaced.
import { writeFileSync } from 'node:fs'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { LockManager } from 'bullmq'
import { Redis } from 'ioredis'

const out = process.env.LOCK_PROBE_OUT!
const loop = monitorEventLoopDelay({ resolution: 10 })
loop.enable()

const pings: number[] = []
const redis = new Redis(process.env.REDIS_URL!, { maxRetriesPerRequest: null })
setInterval(() => {
  const t = performance.now()
  redis.ping().then(() => pings.push(performance.now() - t), () => {})
}, 250).unref()

// Per job: when its lock was last set (moveToActive = processedOn, then each renewal).
const lastSet = new Map<string, number>()
const ages: number[] = [] // lock age when a renewal reached Redis, ms
const renewRtt: number[] = [] // duration of one extendLocks script call, ms
const batch: number[] = [] // jobs renewed per call
let maxTracked = 0
const proto = LockManager.prototype as any
const track = proto.trackJob
proto.trackJob = function (this: any, jobId: string, token: string, ts: number, ...rest: unknown[]) {
  if (jobId) lastSet.set(jobId, ts || Date.now())
  const r = track.call(this, jobId, token, ts, ...rest)
  maxTracked = Math.max(maxTracked, this.trackedJobs.size)
  return r
}
const extend = proto.extendLocks
proto.extendLocks = async function (this: any, jobIds: string[]) {
  const sent = Date.now()
  await extend.call(this, jobIds)
  const done = Date.now()
  renewRtt.push(done - sent)
  batch.push(jobIds.length)
  for (const id of jobIds) {
    const prev = lastSet.get(id)
    if (prev !== undefined) ages.push(done - prev)
    lastSet.set(id, sent) // the new lock counts from when the script was sent (conservative)
  }
}

const q = (xs: number[], p: number) => {
  if (!xs.length) return 0
  const s = [...xs].sort((a, b) => a - b)
  return Math.round(s[Math.min(s.length - 1, Math.floor(p * s.length))]!)
}
function write(): void {
  const summary = {
    loop_delay_ms: { p50: Math.round(loop.percentile(50) / 1e6), p99: Math.round(loop.percentile(99) / 1e6), max: Math.round(loop.max / 1e6) },
    redis_ping_ms: { n: pings.length, p50: q(pings, 0.5), p99: q(pings, 0.99), max: q(pings, 1) },
    renew_call_ms: { n: renewRtt.length, p50: q(renewRtt, 0.5), p99: q(renewRtt, 0.99), max: q(renewRtt, 1) },
    lock_age_at_renewal_ms: { n: ages.length, p50: q(ages, 0.5), p99: q(ages, 0.99), max: q(ages, 1), over_lock: ages.filter((a) => a > Number(process.env.JOB_LOCK_MS ?? 8000)).length },
    jobs_per_renewal: { max: q(batch, 1) },
    max_jobs_held: maxTracked,
  }
  writeFileSync(out, JSON.stringify(summary))
}
setInterval(write, 1000).unref()
process.on('exit', write)
