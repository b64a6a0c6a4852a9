// Queue depth by state, read from Redis when Prometheus scrapes. Depth is global state (every
// replica would report the same numbers), so only processes with QUEUE_METRICS on (`start` turns
// it on unless set to false) are candidates, and of those only the holder of the export lease
// (export-lease.ts) exports it: sums over replicas never double count.
import { Gauge } from 'prom-client'
import { logger } from '../logger.ts'
import type { Platform } from '../platform.ts'
import { exportLease } from './export-lease.ts'
import { registry } from './metrics.ts'

export const QUEUE_STATES = ['waiting', 'prioritized', 'active', 'delayed', 'waiting-children', 'completed', 'failed'] as const

let source: { platform: Platform; queues: string[] } | null = null

new Gauge({
  name: 'queue_jobs',
  help: 'Jobs in each queue by state (exported by one process: QUEUE_METRICS, on by default in start)',
  labelNames: ['queue', 'state'] as const,
  registers: [registry],
  async collect() {
    this.reset()
    if (!source || !exportLease(source.platform, 'queue-depth').held()) return
    const { platform, queues } = source
    await Promise.all(
      queues.map(async (name) => {
        try {
          const counts = await platform.queues.queue(name).getJobCounts(...QUEUE_STATES)
          for (const state of QUEUE_STATES) this.set({ queue: name, state }, counts[state] ?? 0)
        } catch (err) {
          // A scrape during a Redis outage still answers; the gap shows in the graphs.
          logger.warn({ queue: name, err: String(err) }, 'queue depth unavailable')
        }
      }),
    )
  },
})

/** Make this process a candidate exporter of queue depth (the last platform given wins). */
export function exportQueueDepth(platform: Platform, queues: string[]): void {
  source = { platform, queues }
  exportLease(platform, 'queue-depth')
}
