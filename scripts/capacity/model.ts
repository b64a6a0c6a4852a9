// The capacity model (docs/capacity.md): operational laws over measured CPU demands. Every request
// of an operation costs each process a measured amount of CPU (its service demand, ms); a process's
// event loop, a render thread and a Redis shard are one core each at most, and a host has as many
// cores as it has. Throughput is then bounded by the first of them to saturate (the bottleneck):
//   X ≤ instances × 1000 / demand   for each single-threaded part (a loop, a render thread, Redis)
//   X ≤ cores × 1000 / Σ demands    for the processes sharing a host's cores
// scripts/bench/capacity-check.ts checks these predictions against measured throughput on this
// machine; plan.ts sizes a cluster with them.

/** One part that work passes through: a thread (parallelism 1 per instance) or a multi-threaded process. */
export interface Part {
  /** CPU per request, ms. */
  demandMs: number
  /** How many of it run (processes, or threads across processes). */
  instances: number
  /** Cores one instance can use at most: 1 for an event loop, a render thread or Redis; Infinity for a process with a pool. */
  coresEach: number
}

export interface Bound {
  part: string
  /** Requests per second this part allows. */
  throughput: number
}

/** The throughput of a system whose parts share `cores` cores (Infinity: parts on separate hosts), and its bottleneck. */
export function predict(parts: Record<string, Part>, sharedCores: number, sharing: string[] = Object.keys(parts)): { throughput: number; bounds: Bound[]; bottleneck: string } {
  const bounds: Bound[] = []
  for (const [name, p] of Object.entries(parts)) {
    if (p.demandMs <= 0) continue
    bounds.push({ part: name, throughput: (p.instances * Math.min(p.coresEach, sharedCores) * 1000) / p.demandMs })
  }
  const total = sharing.reduce((s, n) => s + (parts[n]?.demandMs ?? 0), 0)
  if (Number.isFinite(sharedCores) && total > 0) bounds.push({ part: `${fmtCores(sharedCores)} shared cores`, throughput: (sharedCores * 1000) / total })
  bounds.sort((a, b) => a.throughput - b.throughput)
  return { throughput: bounds[0]!.throughput, bounds, bottleneck: bounds[0]!.part }
}

const fmtCores = (n: number) => (Math.round(n * 100) / 100).toString()

/** Pods of one role for a rate: CPU needed over what a pod gives at the target utilisation, and at least `min`. */
export function podsFor(rate: number, demandMsPerPod: number, coresPerPod: number, utilisation: number, min = 1): number {
  const cores = (rate * demandMsPerPod) / 1000
  return Math.max(min, Math.ceil(cores / (coresPerPod * utilisation)))
}
