// The autoscaling signal: per queue, how many jobs wait and how long the oldest has waited, read
// from Redis when Prometheus scrapes. Every API and worker process serving /metrics is a candidate,
// and only the holder of the export lease (export-lease.ts) exports these gauges, so the numbers
// appear once for the whole system and `sum()` over all targets never double counts. KEDA or an HPA
// scales a worker pool on them (docs/operations.md).
import { Gauge } from 'prom-client'
import { logger } from '../logger.ts'
import type { Platform } from '../platform.ts'
import { exportLease } from './export-lease.ts'
import { registry } from './metrics.ts'

let source: { platform: Platform; queues: string[] } | null = null

interface Reading {
  queue: string
  waiting: number
  oldestAgeSec: number
}

async function read(platform: Platform, name: string): Promise<Reading> {
  const q = platform.queues.queue(name)
  // Prioritized jobs are ready to run too; delayed ones are not (yet).
  const counts = await q.getJobCounts('waiting', 'prioritized')
  // The wait list is FIFO: its oldest entry is the job waiting longest. Its wait began when it was
  // added, or when its delay ended.
  const [oldest] = await q.getJobs(['waiting'], 0, 0, true)
  const readySince = oldest ? oldest.timestamp + (oldest.delay ?? 0) : null
  return {
    queue: name,
    waiting: (counts.waiting ?? 0) + (counts.prioritized ?? 0),
    oldestAgeSec: readySince === null ? 0 : Math.max(0, (Date.now() - readySince) / 1000),
  }
}

/**
 * One read of Redis serves both gauges of a scrape (prom-client collects them one after the
 * other); readings are reused for a second, then read again.
 */
let cached: { at: number; readings: Promise<Reading[]> } | null = null

function snapshot(): Promise<Reading[]> {
  if (!source || !exportLease(source.platform, 'queue-signal').held()) return Promise.resolve([])
  if (cached && Date.now() - cached.at < 1_000) return cached.readings
  const { platform, queues } = source
  const readings = Promise.all(
    queues.map((name) =>
      read(platform, name).catch((err) => {
        // A scrape during a Redis outage still answers; the gap shows in the graphs.
        logger.warn({ queue: name, err: String(err) }, 'queue signal unavailable')
        return null
      }),
    ),
  ).then((rs) => rs.filter((r): r is Reading => r !== null))
  cached = { at: Date.now(), readings }
  return readings
}

new Gauge({
  name: 'queue_waiting_jobs',
  help: 'Jobs ready to run and not yet started, per queue (exported by one process system-wide)',
  labelNames: ['queue'] as const,
  registers: [registry],
  async collect() {
    this.reset()
    for (const r of await snapshot()) this.set({ queue: r.queue }, r.waiting)
  },
})

new Gauge({
  name: 'queue_oldest_waiting_age_seconds',
  help: 'Seconds the oldest waiting job of each queue has waited; 0 when none waits (exported by one process system-wide)',
  labelNames: ['queue'] as const,
  registers: [registry],
  async collect() {
    this.reset()
    for (const r of await snapshot()) this.set({ queue: r.queue }, r.oldestAgeSec)
  },
})

/** Make this process a candidate exporter of the queue signal (the last platform given wins). */
export function exportQueueSignal(platform: Platform, queues: string[]): void {
  source = { platform, queues: [...new Set(queues)] }
  cached = null
  exportLease(platform, 'queue-signal')
}
