// What one pod of each role can serve, from the measured demands (measured.ts) and the pod's
// CPU request in deploy/kubernetes/base (model.ts's bounds, one pod alone on its cores).
import { predict } from './model.ts'
import { DEMANDS, INVOICE } from './measured.ts'

/** Cores of a render pod (its CPU request = RENDER_CONCURRENCY render threads). */
export const RENDER_POD_CORES = 2
/** An API pod's CPU request: one event loop. */
export const API_POD_CORES = 1

/** Invoices/s one render pod renders, for invoices of `lines` lines (render thread cost grows by line). */
export function renderPodRate(lines = 20): number {
  return renderPod(lines).throughput
}

export function renderPod(lines = 20) {
  const d = DEMANDS.invoice20
  const thread = d.renderThread + (lines - 20) * INVOICE.cpuMsPerLine
  return predict(
    {
      'worker event loop': { demandMs: d.workerMain, instances: 1, coresEach: 1 },
      'render threads': { demandMs: thread, instances: RENDER_POD_CORES, coresEach: 1 },
      'worker other threads': { demandMs: d.workerOther, instances: 1, coresEach: Infinity },
    },
    RENDER_POD_CORES,
  )
}
