// Evaluation counts for /metrics, by reason. Tallied per response so a bulk call of 40 flags costs
// a few counter increments, not 40.
import { metrics } from '../platform/ops/metrics.ts'

export function recordEvaluations(results: Iterable<{ reason: string }>): void {
  const tally = new Map<string, number>()
  for (const r of results) tally.set(r.reason, (tally.get(r.reason) ?? 0) + 1)
  for (const [reason, n] of tally) metrics.evaluations(n, reason)
}

export function recordEvaluation(reason: string): void {
  metrics.evaluations(1, reason)
}
