// The measured figures the capacity model starts from, each with where it was measured. Planning
// (plan.ts) and the Kubernetes manifests' resources (test/deploy-kubernetes.test.ts checks them)
// read these; scripts/bench/capacity-check.ts measures its own on the machine it checks.

/** docs/benchmarks.md, "Invoice rendering, end to end" (2026-11-27, run 2): CPU of every process per invoice. */
export const INVOICE = {
  /** Whole system (API, worker, Redis, MongoDB engine) per 20-line invoice, ms. */
  cpuMs20: 20.2,
  /** Cost of each further line, ms (from the 20- and 1,000-line figures: (336.7 − 20.2) / 980). */
  cpuMsPerLine: 0.323,
  /** The API process's share per invoice, ms. */
  apiCpuMs: 4.4,
  /** Render throughput of one worker at concurrency 8 on 2 threads, invoices/s (105.2–111). */
  throughputPer2Threads: 105.2,
}

/** Worker RSS over 12,000 renders: a plateau of 432–608 MB (docs/benchmarks.md, "Worker RSS is a plateau, not a leak"). */
export const WORKER_RSS_PEAK_MB = 608

/** API process RSS: 255 MiB after the live-stream load, +102 MiB during a 584 MiB HAR export (docs/benchmarks.md). */
export const API_RSS_PEAK_MB = 255 + 102

/**
 * docs/benchmarks.md, "Feature flags": the bare Koa reference and ours answer ~0.9–0.99 × each other;
 * CPU per evaluate request of the flags API process, ms, from bench:flags-cpu (1.03 × bare Koa's).
 */
export const FLAGS = {
  /** In-process provider evaluations per CPU second (bench:flags-provider, median: 10.22 M/s). */
  providerPerCpuSecond: 10_220_000,
}

/** docs/benchmarks.md, "Webhook capture": the embedded engine bounds capture at 1,699 req/s on 2 shared cores. */
export const CAPTURE = {
  embeddedCapturesPerSecond: 1_699,
}
