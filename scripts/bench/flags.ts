// Feature-flag evaluation benchmark. In one run, on this machine:
//  1. the rule engine alone: single-flag evaluations per second of CPU time (target ≥ 1,000,000);
//  2. the reference: a bare Koa app in its own process that reads and parses the same POST body
//     and answers a JSON text as long as evaluate's (lib/reference-server.mjs);
//  3. POST /api/v1/evaluate for 10 flags with 3 rules each: throughput ratio against the
//     reference (target ≥ 0.95) and p99 (target ≤ 5 ms);
//  4. (docs/flags.md, "Operators") the engine per operator (target ≥ 3,000,000 evaluations/s per
//     core) and for a mixed workload of flags with the new operators, a segment and weighted
//     variants (target ≥ 10,000,000), and POST /api/v1/evaluate of 10 such flags (target ≥ 0.95 ×
//     its reference, p99 ≤ 5 ms).
//     Each engine figure is taken in a process of its own (lib/engine-rates.ts), so that one
//     case's JIT state does not decide the next one's.
// HTTP figures come from the shared harness (lib/harness.ts): autocannon in its own process,
// 50 connections, a warm-up round per side, then interleaved rounds (reference, evaluate, …) given
// as median and range, with the load average before each round and every failed request counted.
// The service runs in this process, which does nothing else while a round runs.
// Each workload is measured by two methods, interleaved (docs/benchmarks.md, "How the benchmarks
// measure"): pinned — the server under test (this process with its Redis and store, or the
// reference) on one core and the load generator on another (`taskset`) — whose p99 is the one
// held to the target, and unpinned, every process on every core as until 2026-11-27, whose p99 is
// printed beside it. Without `taskset` or a second core only the unpinned method runs, and the
// output says so.
// Accounts are on the business plan (5,000 evaluation requests/s per SDK key) and requests cycle
// over several projects' SDK keys so that the load measures evaluation, not the rate limiter's 429.
// Appends its results to docs/benchmarks.md (replacing its own earlier section).
//
//   npm run bench:flags [-- --duration 5 --rounds 3 --no-write]
//
// Uses REDIS_URL / MONGO_URL when set, else starts the embedded Redis and MongoDB engine
// (ports and folders: BENCH_PORT_BASE, BENCH_DATA_DIR; docs/benchmarks.md).
import { runBench } from './lib/run.ts'
import { writeBenchSection } from './lib/report.ts'
import type { AddressInfo } from 'node:net'
import os from 'node:os'
import { parseArgs } from 'node:util'
import { appClosed, listen } from '../../src/serve.ts'
import { ALL_INDEXES } from '../../src/collections.ts'
import { flagsService } from '../../src/flags/service.ts'
import { loadConfig } from '../../src/platform/config.ts'
import { createPlatform } from '../../src/platform/platform.ts'
import { coreSplit, processTree, DEFAULT_ROUNDS, DEFAULT_SECONDS, fmt, httpSide, interleave, loadRange, medianRange, ratio as roundRatio, startReferenceServer, type Affinity, type Summary } from './lib/harness.ts'
import { benchMongo, benchPort, benchRedis } from './lib/bench-env.ts'
import { FLAGS, PROJECTS, seedFlags } from './lib/flags-setup.ts'
import { seedRichFlags } from './lib/flags-rich.ts'
import { engineRates } from './lib/engine-rates.ts'

const { values } = parseArgs({
  options: { duration: { type: 'string', default: String(DEFAULT_SECONDS) }, rounds: { type: 'string', default: String(DEFAULT_ROUNDS) }, 'no-write': { type: 'boolean', default: false } },
})
const DURATION = Number(values.duration)
const ROUNDS = Number(values.rounds)

const METHOD_NOTE =
  "Method changed on 2026-11-26 (shared harness): earlier runs of this section reported 1.04 (evaluate) and 0.94 (mixed) against a bare Koa reference that did not read the request body (19,169 req/s; the one that read and parsed it, then shown as the floor, made 13,258), with autocannon in a worker thread of the server's own process and the best of 2 runs. The reference now reads and parses the same body and runs in its own process, the generator runs in its own process, and the figures are medians of interleaved rounds on a loaded machine, so the ratios and p99 are not comparable with those earlier ones."

const PIN_NOTE =
  'Method changed on 2026-11-27: each workload is measured by two methods in the same interleaved rounds, pinned (the server under test, that is this process or the reference, on one core and the load generator on the other, with `taskset`; since 11:20Z the service\'s embedded Redis and store are on the generator\'s core, before on the service\'s) and unpinned (every process on every core, the method of the runs before). ' +
  'The rows held to the targets read the pinned rounds; the rows marked unpinned are comparable with the runs before (docs/benchmarks.md, "How the benchmarks measure" and "Feature flags: where the p99 comes from").'

const MEMO_NOTE =
  'The per-operator rates cycle over 1,024 context values (the mixed workload over 4,096 users), so `matches`, ' +
  '`semver_*`, `before`/`after` and `in_cidr` answer mostly from their per-condition memo of the last 4,096 values ' +
  '(docs/flags.md); a value seen for the first time costs the regex run or parse (for RE2 and CIDR several times an `eq`).'

async function main() {
  const stops: Array<() => Promise<void>> = []
  // The embedded stores serve the service (lease refills, the cache's version check) but are not it:
  // pinned beside the load generator, so the service's core holds the service alone, as the
  // reference's core holds the reference.
  const storePids: number[] = []
  const redisUrl = process.env.REDIS_URL ?? (await benchRedis().then((r) => (stops.push(() => r.child.stop()), storePids.push(r.child.proc.pid!), r.url)))
  const mongoUrl = process.env.MONGO_URL ?? (await benchMongo().then((m) => (stops.push(() => m.child.stop()), storePids.push(m.child.proc.pid!), m.url)))
  const cores = coreSplit()
  const method = cores.split
    ? `pinned: the server under test (this process, or the reference) on CPU ${cores.split.server}, the load generator (and the service's embedded Redis and store) on CPU ${cores.split.generator} (taskset), interleaved with unpinned rounds (every process on CPUs ${cores.split.all})`
    : `unpinned only (${cores.reason}): the server and the load generator share the cores`
  console.log(`method: ${method}`)
  try {
    const rates = engineRates()
    const engine = rates.engine
    console.log(`rule engine: ${fmt(engine, 0)} single-flag evaluations per CPU second (${fmt(rates.wall.engine, 0)}/s by the clock)`)
    const ops = rates
    for (const [name, r] of ops.perOperator) console.log(`  operator ${name}: ${fmt(r, 0)} evaluations/s`)
    console.log(`  mixed workload (segment, semver, regex, numbers, not_in, 3-way split): ${fmt(ops.mixed, 0)} evaluations per CPU second (${fmt(rates.wall.mixed, 0)}/s by the clock; ${fmt(ops.mixed / engine, 2)} × the 3-rule engine rate)`)

    const config = loadConfig({ ...process.env, LOG_LEVEL: 'silent', MONGO_DB: `bench_flags_${Date.now()}`, QUEUE_PREFIX: `bench_flags_${Date.now()}` })
    const platform = await createPlatform({ config, redisUrl: redisUrl!, mongoUrl: mongoUrl!, indexes: ALL_INDEXES })
    const server = await listen(platform, flagsService, await benchPort())
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`
    const requests = await seedFlags(platform, base)
    const richRequests = await seedRichFlags(platform, base, PROJECTS, FLAGS)

    // Each workload has its own reference, sent the very requests evaluate gets (same load on the
    // generator and the HTTP parser) and answering a text as long as evaluate's answer to them.
    const answerTo = async (r: (typeof requests)[number]) => (await fetch(`${base}/evaluate`, { method: 'POST', headers: r.headers, body: r.body })).text()
    const ref = await startReferenceServer(await answerTo(requests[0]!))
    const refRich = await startReferenceServer(await answerTo(richRequests[0]!))
    const root = base.replace(/\/api\/v1$/, '')
    // Pinned sides set their cores before each round, unpinned ones give every process all of them back.
    // This process (not the reference servers and the generator it started) and the stores' process trees.
    const ours = () => [process.pid]
    const stores = () => storePids.flatMap(processTree)
    const pin = (pids: () => number[]): Affinity | undefined => (cores.split ? { pids, server: cores.split.server, generator: cores.split.generator, beside: stores } : undefined)
    const unpin = (pids: () => number[]): Affinity | undefined => (cores.split ? { pids, server: cores.split.all, generator: cores.split.all, beside: stores } : undefined)
    const sides = (suffix: string, affinity: (pids: () => number[]) => Affinity | undefined) => [
      httpSide(`reference${suffix}`, { url: ref.url, requests }, { connections: 50, affinity: affinity(() => [ref.child.pid!]) }),
      httpSide(`evaluate${suffix}`, { url: root, requests }, { connections: 50, affinity: affinity(ours) }),
      httpSide(`reference (mixed)${suffix}`, { url: refRich.url, requests: richRequests }, { connections: 50, affinity: affinity(() => [refRich.child.pid!]) }),
      httpSide(`evaluate (mixed)${suffix}`, { url: root, requests: richRequests }, { connections: 50, affinity: affinity(ours) }),
    ]
    // The primary sides keep their names: pinned where it can be, else unpinned.
    const results = await interleave(cores.split ? [...sides('', pin), ...sides(', unpinned', unpin)] : sides('', unpin), {
      rounds: ROUNDS,
      seconds: DURATION,
      warmupSeconds: 2,
    })
    await ref.close()
    await refRich.close()
    const reference = results.reference!
    const evaluate = results.evaluate!
    const referenceRich = results['reference (mixed)']!
    const rich = results['evaluate (mixed)']!
    const r = roundRatio(evaluate, reference)
    const rr = roundRatio(rich, referenceRich)
    // The unpinned figures (the same summaries when only that method ran).
    const u = cores.split ? ', unpinned' : ''
    const uReference = results[`reference${u}`]!
    const uEvaluate = results[`evaluate${u}`]!
    const uReferenceRich = results[`reference (mixed)${u}`]!
    const uRich = results[`evaluate (mixed)${u}`]!
    const ur = roundRatio(uEvaluate, uReference)
    const urr = roundRatio(uRich, uReferenceRich)
    const failures = (s: Summary) => `${s.failed}${s.failed ? ` ${Object.entries(s.failures).map(([k, n]) => `${k}: ${n}`).join(', ')}` : ''}`
    console.log(`method: ${method}`)
    console.log(`reference: ${medianRange(reference)}, p99 ${reference.p99} ms; evaluate: ${medianRange(evaluate)}, p99 ${evaluate.p99} ms, ratio ${r.text}, failed ${failures(evaluate)}`)
    console.log(`reference (mixed): ${medianRange(referenceRich)}, p99 ${referenceRich.p99} ms; evaluate (mixed): ${medianRange(rich)}, p99 ${rich.p99} ms, ratio ${rr.text}, failed ${failures(rich)}`)
    if (cores.split) {
      console.log(`unpinned: reference p99 ${uReference.p99} ms, evaluate p99 ${uEvaluate.p99} ms, ratio ${ur.text}; mixed: reference p99 ${uReferenceRich.p99} ms, evaluate p99 ${uRich.p99} ms, ratio ${urr.text}`)
    }

    await new Promise<void>((r) => {
      server.close(() => r())
      server.closeAllConnections()
    })
    await appClosed(server)
    await platform.close()

    const verdict = (ok: boolean) => (ok ? 'met' : 'NOT met')
    const m = cores.split ? ', pinned' : ', unpinned'
    const pct = (s: Summary) => `p50 / p90 / p99 ${s.p50} / ${s.p90} / ${s.p99} ms`
    const lines = [
      '## Feature flags: evaluation (`npm run bench:flags`)',
      '',
      `Run ${new Date().toISOString().slice(0, 10)} on ${os.cpus().length} shared cores (${os.cpus()[0]?.model.trim()}), Node ${process.version}, ` +
        `${process.env.MONGO_URL ? 'external MongoDB' : 'embedded MongoDB engine'}, ${process.env.REDIS_URL ? 'external' : 'embedded'} Redis. ` +
        `Shared harness: autocannon in its own process, 50 connections, a 2 s warm-up round per side, then ${ROUNDS} interleaved rounds of ${DURATION} s; ` +
        `median (range) of the rounds; ${PROJECTS} business-plan projects' SDK keys in rotation. ` +
        `Load average (1 min) before the rounds: ${loadRange(...Object.values(results))}. ` +
        `Method: ${method}. Latencies are autocannon's, in whole ms (truncated: "5 ms" is below 6).`,
      '',
      '| measurement | result | target | |',
      '|---|---|---|---|',
      `| rule engine, single-flag evaluations per CPU second (3 rules, percent path; by the clock: ${fmt(rates.wall.engine, 0)}/s) | ${fmt(engine, 0)} | ≥ 1,000,000 | ${verdict(engine >= 1_000_000)} |`,
      `| reference: bare Koa in its own process, reads and parses the same POST body, answers a text as long as evaluate's${m} | ${medianRange(reference)}, ${pct(reference)} | | |`,
      `| POST /api/v1/evaluate, 10 flags × 3 rules${m} | ${medianRange(evaluate)}, ${pct(evaluate)} | | |`,
      `| throughput ratio evaluate / reference (per round)${m} | ${r.text} | ≥ 0.95 | ${verdict(r.median >= 0.95)} |`,
      `| evaluate p99 (median of the rounds; the reference's: ${reference.p99} ms)${m} | ${evaluate.p99} ms | ≤ 5 ms | ${verdict(evaluate.p99! <= 5)} |`,
      ...(cores.split
        ? [
            `| p99 unpinned (generator shares the cores): evaluate (the reference's: ${uReference.p99} ms) | ${uEvaluate.p99} ms | ≤ 5 ms | ${verdict(uEvaluate.p99! <= 5)} |`,
            `| throughput unpinned: reference ${medianRange(uReference)}, evaluate ${medianRange(uEvaluate)}; ratio (per round) | ${ur.text} | ≥ 0.95 | ${verdict(ur.median >= 0.95)} |`,
          ]
        : []),
      `| evaluate failed requests (non-2xx, errors, timeouts) | ${failures(evaluate)} | 0 | ${verdict(evaluate.failed === 0)} |`,
      ...ops.perOperator.map(([name, r]) => `| rule engine, one condition \`${name}\`, evaluations per CPU second | ${fmt(r, 0)} | ≥ 3,000,000 | ${verdict(r >= 3_000_000)} |`),
      `| rule engine, mixed workload (segment + semver, regex + number, not_in + 3-way split, fallthrough split), evaluations per CPU second (by the clock: ${fmt(rates.wall.mixed, 0)}/s) | ${fmt(ops.mixed, 0)} | ≥ 10,000,000 | ${verdict(ops.mixed >= 10_000_000)} |`,
      `| mixed workload / 3-rule engine rate of the same run (a ratio that depends less on the machine's load) | ${fmt(ops.mixed / engine, 2)} | | |`,
      `| reference for the mixed requests (same body, answer as long)${m} | ${medianRange(referenceRich)}, ${pct(referenceRich)} | | |`,
      `| POST /api/v1/evaluate, 10 flags of that mixed workload${m} | ${medianRange(rich)}, ${pct(rich)} | | |`,
      `| throughput ratio mixed evaluate / its reference (per round)${m} | ${rr.text} | ≥ 0.95 | ${verdict(rr.median >= 0.95)} |`,
      `| mixed evaluate p99 (median of the rounds; its reference's: ${referenceRich.p99} ms)${m} | ${rich.p99} ms | ≤ 5 ms | ${verdict(rich.p99! <= 5)} |`,
      ...(cores.split
        ? [
            `| p99 unpinned (generator shares the cores): mixed evaluate (its reference's: ${uReferenceRich.p99} ms) | ${uRich.p99} ms | ≤ 5 ms | ${verdict(uRich.p99! <= 5)} |`,
            `| throughput unpinned: reference ${medianRange(uReferenceRich)}, mixed evaluate ${medianRange(uRich)}; ratio (per round) | ${urr.text} | ≥ 0.95 | ${verdict(urr.median >= 0.95)} |`,
          ]
        : []),
      `| mixed evaluate failed requests | ${failures(rich)} | 0 | ${verdict(rich.failed === 0)} |`,
      '',
      "Per round (load average before it → req/s, p99; other processes' CPU during the round where measured): " +
        Object.values(results)
          .map((s) => `${s.name} ${s.rounds.map((x) => `${x.load.toFixed(1)} → ${fmt(x.rate, 0)}, ${x.p99} ms${x.othersCpu !== undefined ? `, others ${fmt(x.othersCpu, 0)} ms/s` : ''}`).join('; ')}`)
          .join(' · ') +
        '.',
      '',
      'Every evaluation request authenticates the SDK key (hash lookup in memory), takes a rate-limit point from its ' +
        "replica's leased block (a Redis call only about once per 250 requests on the business plan) and evaluates " +
        "precompiled flags from the in-memory cache. POST /api/v1/evaluate is a hot route, answered by the HTTP server's " +
        'request listener before Koa builds a context, with the same request id, metrics, access log and error answers ' +
        '(src/platform/http/before-koa.ts, src/flags/sdk/evaluate-fast-path.ts, docs/flags.md); its answer is written from ' +
        'memoised pieces, with the other answers of its event-loop turn. ' +
        'Pinned, the server under test and the load generator each have a core of their own, as they would on machines of ' +
        'their own; unpinned, the generator shares the two cores with the server (in a process of its own), so a request ' +
        'that makes the generator send a body and parse a longer answer costs twice, and both sides\' tail is mostly the ' +
        'scheduler (docs/benchmarks.md, "Feature flags: where the p99 comes from"). Compare ratios within one run.',
      '',
      PIN_NOTE,
      '',
      METHOD_NOTE,
      '',
      MEMO_NOTE,
      '',
    ]
    console.log('\n' + lines.join('\n'))
    if (!values['no-write']) writeBenchSection(lines.join('\n'))
  } finally {
    for (const s of stops) await s()
  }
}

runBench(main)
