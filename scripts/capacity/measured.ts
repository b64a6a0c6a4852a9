// The measured figures the capacity model starts from, each with where it was measured. The
// planner (plan.ts), the autoscaler simulation (simulate.ts) and the Kubernetes manifests'
// resources (test/deploy-kubernetes.test.ts checks them) read these. DEMANDS are copied from the
// latest `npm run bench:capacity-check` (docs/capacity/measured-here.json), the rest from
// docs/benchmarks.md.

/** CPU ms per request of each process, from bench:capacity-check's calibration (2026-11-28, 2 cores, load 1–3). */
export const DEMANDS = {
  /** A 20-line invoice: API process, worker (its event loop, one render thread, its other threads), Redis, the MongoDB engine. */
  invoice20: { api: 2.2, workerMain: 1.37, renderThread: 4.63, workerOther: 1.7, redis: 0.4, mongo: 0.37, redisCommands: 38.4 },
  /** POST /api/v1/evaluate of 10 flags (3 rules each): the flags API process and Redis (none: flag sets are in memory). */
  flagsEvaluate: { api: 0.024, redis: 0 },
}

/** docs/benchmarks.md, "Invoice rendering, end to end" (2026-11-27): each further line costs this much render CPU, ms ((336.7 − 20.2) / 980). */
export const INVOICE = { cpuMsPerLine: 0.323 }

/** Worker RSS over 12,000 renders: a plateau of 432–608 MB (docs/benchmarks.md, "Worker RSS is a plateau, not a leak"). */
export const WORKER_RSS_PEAK_MB = 608

/** API process RSS: 255 MiB after the live-stream load, +102 MiB during a 584 MiB HAR export (docs/benchmarks.md). */
export const API_RSS_PEAK_MB = 255 + 102

/** In-process provider evaluations per CPU second (docs/benchmarks.md, bench:flags-provider median: 10.22 M/s). */
export const PROVIDER_EVALUATIONS_PER_CPU_S = 10_220_000

/**
 * Webhook capture: 1,699 captures/s on 2 shared cores with everything on them (API, worker, Redis,
 * the embedded engine, the load generator: docs/benchmarks.md, "Webhook capture"), so at most
 * 2,000 / 1,699 = 1.18 ms of CPU per capture for the whole system. No per-process split is measured
 * yet: the planner charges it all to the webhooks API (an upper bound).
 */
export const CAPTURE = { systemCpuMs: 2000 / 1699 }

/** Redis commands one shard serves per second of CPU: the invoice path's 38.4 commands in 0.4 ms of Redis CPU. */
export const REDIS_COMMANDS_PER_CPU_S = (38.4 / 0.4) * 1000
