// http_request_duration_seconds: a histogram that every request of every service observes, kept
// in plain arrays. prom-client's Histogram.observe validates the labels, hashes them into a string
// and counts into an object keyed by the float bucket bounds: on the flag evaluation route that was
// more than a microsecond of each request. This class records the same series and hands them to
// prom-client's registry through the metric interface (get/reset) its own metrics implement, so the
// exposition is prom-client's.
import type { Metric, Registry } from 'prom-client'

type RequestLabels = { service: string; method: string; route: string; status: string }

interface Series {
  labels: RequestLabels
  /** counts[i]: observations in (buckets[i-1], buckets[i]]; the last one: above every bound. */
  counts: Float64Array
  sum: number
  count: number
}

export class RequestHistogram {
  readonly type = 'histogram'
  readonly aggregator = 'sum'
  private readonly series = new Map<string, Series>()

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly buckets: readonly number[],
    registry: Registry,
  ) {
    // prom-client's types name only its own metric classes; its registry uses name, get() and reset().
    registry.registerMetric(this as unknown as Metric)
  }

  observe(service: string, method: string, route: string, status: number, seconds: number): void {
    const key = `${service} ${method} ${status} ${route}`
    let s = this.series.get(key)
    if (s === undefined) {
      s = { labels: { service, method, route, status: String(status) }, counts: new Float64Array(this.buckets.length + 1), sum: 0, count: 0 }
      this.series.set(key, s)
    }
    const b = this.buckets
    let i = 0
    while (i < b.length && seconds > b[i]!) i++
    s.counts[i]!++
    s.sum += seconds
    s.count++
  }

  /** prom-client's metric shape: cumulative buckets with `le`, then `_sum` and `_count`. */
  get() {
    const values: Array<{ labels: Record<string, string | number>; value: number; metricName: string }> = []
    for (const s of this.series.values()) {
      let acc = 0
      this.buckets.forEach((le, i) => {
        acc += s.counts[i]!
        values.push({ labels: { ...s.labels, le }, value: acc, metricName: `${this.name}_bucket` })
      })
      values.push({ labels: { ...s.labels, le: '+Inf' }, value: s.count, metricName: `${this.name}_bucket` })
      values.push({ labels: { ...s.labels }, value: s.sum, metricName: `${this.name}_sum` })
      values.push({ labels: { ...s.labels }, value: s.count, metricName: `${this.name}_count` })
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator }
  }

  reset(): void {
    this.series.clear()
  }
}
