// Queue depth by state, read from Redis when Prometheus scrapes. Depth is global state (every
// replica would report the same numbers), so only the process started with QUEUE_METRICS=true
// (or `start`, where it is on unless set to false) exports it: sums over replicas never double count.
import { Gauge } from 'prom-client'
import { logger } from '../logger.ts'
import type { Platform } from '../platform.ts'
import { ALL_QUEUES } from '../queue-names.ts'
import { registry } from './metrics.ts'

export const QUEUE_STATES = ['waiting', 'prioritized', 'active', 'delayed', 'waiting-children', 'completed', 'failed'] as const

let source: Platform | null = null

new Gauge({
  name: 'queue_jobs',
  help: 'Jobs in each queue by state (exported by one process: QUEUE_METRICS, on by default in start)',
  labelNames: ['queue', 'state'] as const,
  registers: [registry],
  async collect() {
    this.reset()
    const platform = source
    if (!platform) return
    await Promise.all(
      ALL_QUEUES.map(async (name) => {
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

/** Make this process the one that exports queue depth (the last platform given wins). */
export function exportQueueDepth(platform: Platform): void {
  source = platform
}
