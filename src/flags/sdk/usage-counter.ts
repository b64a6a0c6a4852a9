// Per-flag usage of the service's own evaluations (OFREP, /evaluate): counted in memory per
// evaluation result — results are frozen objects of one flag and variant (engine/rules.ts), so a
// count is one map lookup on the hot path — and added to MongoDB every few seconds
// (store/usage-store.ts), where in-process providers' reports join them. Also the Prometheus
// counter flag_usage_evaluations_total{source, flag}: its `flag` label ("<project>/<environment>/<flag>")
// is bounded to the first MAX_FLAG_LABELS flags this process saw; later ones count under "_other".
import type { Db } from 'mongodb'
import { Counter } from 'prom-client'
import { logger } from '../../platform/logger.ts'
import { registry } from '../../platform/ops/metrics.ts'
import { variantOf } from '../engine/ofrep-result.ts'
import type { Evaluation } from '../engine/rules.ts'
import { addUsage, type UsageRow, type UsageSource } from '../store/usage-store.ts'

export const MAX_FLAG_LABELS = 200
export const OTHER_FLAGS = '_other'

const labelled = new Set<string>()
const usageMetric = new Counter({
  name: 'flag_usage_evaluations_total',
  help: `Flag evaluations by flag ("<project>/<environment>/<flag>", the first ${MAX_FLAG_LABELS} flags seen, then "${OTHER_FLAGS}") and where they ran (service, in_process)`,
  labelNames: ['source', 'flag'] as const,
  registers: [registry],
})

/** The metric's label for a flag: its own while fewer than MAX_FLAG_LABELS are labelled. */
function flagLabel(project: string, environment: string, flag: string): string {
  const id = `${project}/${environment}/${flag}`
  if (labelled.has(id)) return id
  if (labelled.size >= MAX_FLAG_LABELS) return OTHER_FLAGS
  labelled.add(id)
  return id
}

export function countInMetric(source: UsageSource, project: string, environment: string, flag: string, n: number): void {
  usageMetric.inc({ source, flag: flagLabel(project, environment, flag) }, n)
}

interface Entry {
  project: string
  environment: string
  flag: string
  variant: string
  n: number
}

let pending = new Map<Evaluation, Entry>()

/** One evaluation the service served (`project`/`environment` of the flag set it came from). */
export function countServed(project: string, environment: string, flag: string, r: Evaluation): void {
  const e = pending.get(r)
  if (e !== undefined) e.n++
  else pending.set(r, { project, environment, flag, variant: variantOf(r), n: 1 })
}

/** Adds what was counted to the store and the metric; what fails to be stored is counted again next time. */
export async function flushServed(db: Db): Promise<void> {
  if (pending.size === 0) return
  const batch = pending
  pending = new Map()
  const rows: UsageRow[] = []
  for (const e of batch.values()) rows.push({ project: e.project, environment: e.environment, flag: e.flag, variant: e.variant, source: 'service', n: e.n })
  try {
    await addUsage(db, rows, new Date())
  } catch (err) {
    for (const [r, e] of batch) {
      const now = pending.get(r)
      if (now) now.n += e.n
      else pending.set(r, e)
    }
    throw err
  }
  for (const r of rows) countInMetric('service', r.project, r.environment, r.flag, r.n)
}

/** Flushes the service's counts every `everyMs` until stopped (the last flush runs on stop). */
export function startUsageFlush(db: Db, everyMs = 5_000): { stop(): Promise<void> } {
  const run = () => flushServed(db).catch((err) => logger.warn({ err: String(err) }, 'flag usage not stored; kept for the next flush'))
  const timer = setInterval(run, everyMs)
  timer.unref()
  return {
    async stop() {
      clearInterval(timer)
      await run()
    },
  }
}
