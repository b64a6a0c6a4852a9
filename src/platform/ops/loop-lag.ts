// The event-loop lag gauges (nodejs_eventloop_lag_*), in place of prom-client's own: the same
// names and meaning, sampled every 100 ms instead of 10. prom-client's 10 ms sampling timer woke an
// idle process 100 times a second, most of its idle CPU on a small VM (docs/operations.md,
// "Metrics"). Each sample records how late it ran (the interval taken off): an idle loop reads
// about 0, a 300 ms stall about 0.3 s. The samples go to a histogram of our own, emptied at each
// scrape; Node's monitorEventLoopDelay drops the first interval after a reset, so a stall just
// after a scrape would not show.
import { createHistogram } from 'node:perf_hooks'
import { Gauge, type Registry } from 'prom-client'

const LAG_SAMPLE_MS = 100
const SAMPLE_NS = BigInt(LAG_SAMPLE_MS) * 1_000_000n

/** prom-client's lag metrics, which registerLoopLag replaces (removed from the registry first). */
const LAG_METRICS = ['', 'min_', 'max_', 'mean_', 'stddev_', 'p50_', 'p90_', 'p99_'].map((k) => `nodejs_eventloop_lag_${k}seconds`)

export function registerLoopLag(registry: Registry): void {
  for (const name of LAG_METRICS) registry.removeSingleMetric(name)
  const histogram = createHistogram()
  let last = process.hrtime.bigint()
  setInterval(() => {
    const now = process.hrtime.bigint()
    const late = now - last - SAMPLE_NS
    last = now
    histogram.record(late > 0n ? late : 1n) // the histogram takes values ≥ 1 (ns)
  }, LAG_SAMPLE_MS).unref()
  const seconds = (ns: number) => (Number.isFinite(ns) ? ns / 1e9 : 0)
  const gauge = (name: string, help: string, collect?: () => void) => new Gauge({ name, help, registers: [registry], collect })
  // Registered first, so its collect sets the others before the registry reads them.
  const lag: Gauge = gauge('nodejs_eventloop_lag_seconds', 'Lag of event loop in seconds (a setImmediate at the previous scrape).', () => {
    const start = process.hrtime.bigint()
    setImmediate(() => lag.set(Number(process.hrtime.bigint() - start) / 1e9))
    if (histogram.count > 0) {
      min.set(seconds(histogram.min))
      max.set(seconds(histogram.max))
      mean.set(seconds(histogram.mean))
      stddev.set(seconds(histogram.stddev))
      p50.set(seconds(histogram.percentile(50)))
      p90.set(seconds(histogram.percentile(90)))
      p99.set(seconds(histogram.percentile(99)))
    }
    histogram.reset()
  })
  const min = gauge('nodejs_eventloop_lag_min_seconds', 'The minimum recorded event loop delay since the last scrape.')
  const max = gauge('nodejs_eventloop_lag_max_seconds', 'The maximum recorded event loop delay since the last scrape.')
  const mean = gauge('nodejs_eventloop_lag_mean_seconds', 'The mean of the recorded event loop delays since the last scrape.')
  const stddev = gauge('nodejs_eventloop_lag_stddev_seconds', 'The standard deviation of the recorded event loop delays since the last scrape.')
  const p50 = gauge('nodejs_eventloop_lag_p50_seconds', 'The 50th percentile of the recorded event loop delays since the last scrape.')
  const p90 = gauge('nodejs_eventloop_lag_p90_seconds', 'The 90th percentile of the recorded event loop delays since the last scrape.')
  const p99 = gauge('nodejs_eventloop_lag_p99_seconds', 'The 99th percentile of the recorded event loop delays since the last scrape.')
}
