// Single autocannon runs for the benchmarks that do not (yet) take interleaved rounds: a thin
// layer over the shared harness (harness.ts), so their load generator also runs in its own
// process and their reference is the same bare Koa server in its own process.
import type autocannon from 'autocannon'
import { loadFailures, runLoad, startReferenceServer, type LoadTarget, type ReferenceServer } from './harness.ts'

export { fmt } from './harness.ts'

export interface LoadResult {
  rps: number
  p50: number
  p99: number
  errors: number
  non2xx: number
  /** Every failed request: non-2xx answers, errors and timeouts. */
  failed: number
}

/** One run of `duration` s (default 10) at `connections` (default 50), in the load generator's process. */
export async function load(opts: LoadTarget & Pick<autocannon.Options, 'connections' | 'duration' | 'workers'>): Promise<LoadResult> {
  const { connections = 50, duration = 10, workers: _inProcessOnly, ...target } = opts
  const r = await runLoad(target, { connections, duration: Number(duration) })
  return { rps: r.ok / r.seconds, p50: r.p50, p99: r.p99, errors: r.errors, non2xx: r.non2xx, failed: loadFailures(r).failed }
}

/** The reference: bare Koa in its own process, answering `body` (reading and parsing any POST body). */
export function startReference(body: unknown = { ok: true }): Promise<ReferenceServer> {
  return startReferenceServer(JSON.stringify(body))
}
