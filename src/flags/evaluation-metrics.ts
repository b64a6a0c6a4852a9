// Evaluation counts for /metrics, by reason. Each is an addition to a plain number; the Prometheus
// counter catches up when it is scraped (ops/metrics.ts).
import { metrics } from '../platform/ops/metrics.ts'
import type { Reason } from './rules.ts'

export function recordEvaluation(reason: Reason): void {
  metrics.evaluation(reason)
}
