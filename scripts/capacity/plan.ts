// Sizes a cluster for a target load from the measured demands (measured.ts) and the pods' CPU
// requests (deploy/kubernetes/base): pods per role, Redis shards and MongoDB writes, and where the
// first limit that more pods cannot lift is (docs/capacity.md, "Planning a load").
//   npx tsx scripts/capacity/plan.ts [--invoices 1000] [--lines 20] [--evaluate-requests 1000000]
//                                    [--provider-evaluations 100000000] [--captures 10000] [--receiver-ms 200]
import { parseArgs } from 'node:util'
import { podsFor } from './model.ts'
import { CAPTURE, DEMANDS, INVOICE, PROVIDER_EVALUATIONS_PER_CPU_S, REDIS_COMMANDS_PER_CPU_S } from './measured.ts'
import { API_POD_CORES, RENDER_POD_CORES, renderPod } from './pod-rates.ts'

/** Pods are planned to run at this share of their CPU request, leaving room for a burst while the autoscaler reacts. */
export const UTILISATION = 0.7
/** Forward slots per IO pod (`--concurrency 100` in worker-io.yaml). */
const IO_SLOTS = 100
/** The business plan's evaluate rate per SDK key (src/platform/plans.ts). */
const EVALUATE_PER_KEY = 5_000

export interface Load {
  invoices: number
  lines: number
  evaluateRequests: number
  providerEvaluations: number
  captures: number
  receiverMs: number
}

export interface Row {
  role: string
  pods: number
  cores: number
  note: string
}

export function plan(l: Load): { rows: Row[]; redis: { commandsPerS: number; shardCpu: number; queueShardLimit: number }; mongoWritesPerS: number; limits: string[] } {
  const d = DEMANDS.invoice20
  const pod = renderPod(l.lines)
  const renderPods = Math.max(1, Math.ceil(l.invoices / (pod.throughput * UTILISATION)))
  const invoiceApi = podsFor(l.invoices, d.api, API_POD_CORES, UTILISATION, 2)
  const flagsApi = podsFor(l.evaluateRequests, DEMANDS.flagsEvaluate.api, API_POD_CORES, UTILISATION, 2)
  const webhooksApi = podsFor(l.captures, CAPTURE.systemCpuMs, API_POD_CORES, UTILISATION, 2)
  const inFlight = (l.captures * l.receiverMs) / 1000
  const ioPods = Math.max(1, Math.ceil(inFlight / (IO_SLOTS * UTILISATION)))
  const rows: Row[] = [
    { role: 'invoice API', pods: invoiceApi, cores: invoiceApi * API_POD_CORES, note: `${d.api} ms of CPU per invoice` },
    { role: 'render pool', pods: renderPods, cores: renderPods * RENDER_POD_CORES, note: `${Math.round(pod.throughput)} invoices/s of ${l.lines} lines per pod (bound: ${pod.bottleneck})` },
    { role: 'flags API', pods: flagsApi, cores: flagsApi * API_POD_CORES, note: `${DEMANDS.flagsEvaluate.api} ms per evaluate request of 10 flags` },
    { role: 'webhooks API', pods: webhooksApi, cores: webhooksApi * API_POD_CORES, note: `≤ ${CAPTURE.systemCpuMs.toFixed(2)} ms per capture (the whole system's CPU: an upper bound)` },
    { role: 'IO pool (forwards)', pods: ioPods, cores: ioPods * 0.25, note: `${Math.round(inFlight)} forwards in flight at ${l.receiverMs} ms per receiver, ${IO_SLOTS} slots per pod` },
    { role: 'ops pool', pods: 2, cores: 0.5, note: 'sweeps and light queues; for availability' },
    { role: 'in-process provider (your apps)', pods: 0, cores: Math.ceil(l.providerEvaluations / PROVIDER_EVALUATIONS_PER_CPU_S), note: `${(PROVIDER_EVALUATIONS_PER_CPU_S / 1e6).toFixed(2)} M evaluations per CPU second, in the applications' processes` },
  ]
  const commandsPerS = l.invoices * d.redisCommands
  const shardCpu = (l.invoices * d.redis) / 1000
  // Each queue has its own hash tag, so one queue's commands all go to one shard.
  const queueShardLimit = 1000 / d.redis
  const limits = [
    `invoice-render's Redis shard: one queue lives on one shard, which does ${d.redisCommands} commands per invoice in ${d.redis} ms of its CPU: at most ${Math.round(queueShardLimit).toLocaleString('en-US')} invoices/s per queue, whatever the shard count (${Math.round((l.invoices / queueShardLimit) * 100)} % of it at this load)`,
    `evaluate rate per SDK key: ${EVALUATE_PER_KEY.toLocaleString('en-US')}/s on the business plan, so ${l.evaluateRequests.toLocaleString('en-US')} requests/s need ≥ ${Math.ceil(l.evaluateRequests / EVALUATE_PER_KEY)} SDK keys (projects)`,
  ]
  return { rows, redis: { commandsPerS, shardCpu, queueShardLimit }, mongoWritesPerS: l.invoices * 2 + l.captures, limits }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({
    options: {
      invoices: { type: 'string', default: '1000' },
      lines: { type: 'string', default: '20' },
      'evaluate-requests': { type: 'string', default: '1000000' },
      'provider-evaluations': { type: 'string', default: '100000000' },
      captures: { type: 'string', default: '10000' },
      'receiver-ms': { type: 'string', default: '200' },
    },
  })
  const l: Load = {
    invoices: Number(values.invoices),
    lines: Number(values.lines),
    evaluateRequests: Number(values['evaluate-requests']),
    providerEvaluations: Number(values['provider-evaluations']),
    captures: Number(values.captures),
    receiverMs: Number(values['receiver-ms']),
  }
  for (const [k, v] of Object.entries(l)) if (!(Number.isFinite(v) && v >= 0)) throw new Error(`--${k} must be a number ≥ 0`)
  const p = plan(l)
  console.log(`| role | pods | cores (requests) | from |\n|---|---|---|---|`)
  for (const r of p.rows) console.log(`| ${r.role} | ${r.pods || '–'} | ${r.cores} | ${r.note} |`)
  console.log(`\nRedis: ${Math.round(p.redis.commandsPerS).toLocaleString('en-US')} commands/s from invoices, ${p.redis.shardCpu.toFixed(2)} core of the shard holding invoice-render (${(REDIS_COMMANDS_PER_CPU_S / 1000).toFixed(0)}k commands per CPU second measured here); captures' commands not measured.`)
  console.log(`MongoDB: ≥ ${p.mongoWritesPerS.toLocaleString('en-US')} writes/s (an estimate, not measured: the embedded engine keeps no write counters. 2 per invoice: the one update bench:invoice's API floor stands for, and the stored invoice; ≥ 1 per capture).`)
  console.log('\nFirst limits more pods do not lift:')
  for (const x of p.limits) console.log(`- ${x}`)
}
