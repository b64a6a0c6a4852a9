// Prometheus metrics (prom-client): one registry per process, the metric definitions, and the small
// functions other code calls to record domain events (render durations, forward outcomes,
// evaluations). HTTP and job metrics are fed by the hooks in http/request-lifecycle.ts and workers.ts.
import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client'
import { onRequestDone, type FinishedRequest } from '../http/request-lifecycle.ts'
import { onJobProcessed } from '../queue/workers.ts'
import { registerLoopLag } from './loop-lag.ts'
import { RequestHistogram } from './request-histogram.ts'

export const registry = new Registry()
// prom-client's lag sampler is left to wake once a second and its gauges are replaced (loop-lag.ts).
collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: 1000 })
registerLoopLag(registry)

// Invoice requests wait for their render, so HTTP buckets reach the render timeout (30 s).
const httpDuration = new RequestHistogram(
  'http_request_duration_seconds',
  'HTTP request duration by service, method, route template and status',
  [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  registry,
)

const jobWait = new Histogram({
  name: 'queue_job_wait_seconds',
  help: 'Time a job waited in its queue before its first attempt started (after any delay)',
  labelNames: ['queue'] as const,
  buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300],
  registers: [registry],
})

const jobRun = new Histogram({
  name: 'queue_job_run_seconds',
  help: 'Processing time of one job attempt, by queue and outcome',
  labelNames: ['queue', 'outcome'] as const,
  buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  registers: [registry],
})

const jobFailures = new Counter({
  name: 'queue_job_failures_total',
  help: 'Failed job attempts by queue (a retried job counts once per failed attempt)',
  labelNames: ['queue'] as const,
  registers: [registry],
})

const renderDuration = new Histogram({
  name: 'invoice_render_seconds',
  help: 'Time to render one invoice PDF in the render pool (excludes logo fetch and storage)',
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  registers: [registry],
})

export const FORWARD_OUTCOMES = ['success', 'http_error', 'timeout', 'network_error', 'blocked', 'dead_lettered'] as const
export type ForwardOutcome = (typeof FORWARD_OUTCOMES)[number]

const forwardAttempts = new Counter({
  name: 'webhook_forward_attempts_total',
  help: 'Webhook forward attempts by outcome',
  labelNames: ['outcome'] as const,
  registers: [registry],
})

export const EVALUATION_REASONS = ['TARGETING_MATCH', 'DEFAULT', 'DISABLED', 'FLAG_NOT_FOUND', 'ERROR'] as const
// Evaluations are counted per flag, tens of thousands a second: they add to plain numbers here and
// the counter (flag_evaluations_total) catches up when it is collected (each scrape of /metrics).
const pendingEvaluations = Object.fromEntries(EVALUATION_REASONS.map((r) => [r, 0])) as Record<(typeof EVALUATION_REASONS)[number], number>
new Counter({
  name: 'flag_evaluations_total',
  help: 'Flag evaluations served, by reason',
  labelNames: ['reason'] as const,
  registers: [registry],
  collect() {
    for (const reason of EVALUATION_REASONS) {
      const n = pendingEvaluations[reason]
      if (n > 0) {
        pendingEvaluations[reason] = 0
        this.inc({ reason }, n)
      }
    }
  },
})

/** Functions domain code calls; each is cheap (an in-memory increment). */
export const metrics = {
  renderDuration(ms: number): void {
    renderDuration.observe(ms / 1000)
  },
  forwardAttempt(outcome: ForwardOutcome): void {
    // Labels stay a closed set whatever a caller passes: unbounded labels break Prometheus.
    forwardAttempts.inc({ outcome: (FORWARD_OUTCOMES as readonly string[]).includes(outcome) ? outcome : 'other' })
  },
  /** One flag evaluation (called per flag, so it only adds to a number; see flag_evaluations_total). */
  evaluation(reason: (typeof EVALUATION_REASONS)[number]): void {
    pendingEvaluations[reason]++
  },
}

/** The route template (never the raw path, which would make label values unbounded). */
export function routeLabel(ctx: FinishedRequest): string {
  const r = (ctx.state?.route as string | undefined) ?? (ctx as any)._matchedRoute
  return typeof r === 'string' ? r : 'unmatched'
}

let installed = false
/** Subscribe to the request and job hooks once per process. */
export function installMetricHooks(): void {
  if (installed) return
  installed = true
  onRequestDone((ctx, ms) => {
    httpDuration.observe((ctx.state?.service as string | undefined) ?? 'unknown', ctx.method, routeLabel(ctx), ctx.status, ms / 1000)
  })
  onJobProcessed((queue, job, outcome, ms) => {
    jobRun.observe({ queue, outcome }, ms / 1000)
    if (outcome === 'failed') jobFailures.inc({ queue })
    // Only the first attempt: later attempts' waits are backoff delays we asked for.
    if (job.attemptsMade === 0 && job.processedOn) {
      const readyAt = job.timestamp + (job.opts.delay ?? 0)
      jobWait.observe({ queue }, Math.max(0, job.processedOn - readyAt) / 1000)
    }
  })
}
