// Feature-flag evaluation benchmark. In one run, on this machine:
//  1. the rule engine alone: single-flag evaluations per second on one core (target ≥ 1,000,000);
//  2. the reference: a bare Koa app answering a small JSON body (autocannon, 50 connections);
//  3. POST /api/v1/evaluate for 10 flags with 3 rules each (same load): throughput ratio against
//     the reference (target ≥ 0.7) and p99 (target ≤ 10 ms);
//  4. (docs/flags.md, "Operators") the engine per operator and for a mixed workload of flags with
//     the new operators,
//     a segment and weighted variants (target ≥ 3,000,000 evaluations/s per core), and
//     POST /api/v1/evaluate of 10 such flags (target ≥ 0.8 × the reference).
//     Each engine figure is taken in a process of its own (lib/engine-rates.ts), so that one
//     case's JIT state does not decide the next one's.
// The load generator runs in a worker thread so that it does not share the server's event loop.
// Accounts are on the business plan (5,000 evaluation requests/s per SDK key) and requests cycle
// over several projects' SDK keys so that the load measures evaluation, not the rate limiter's 429.
// Appends its results to docs/benchmarks.md (replacing its own earlier section).
//
//   npm run bench:flags [-- --duration 10 --no-write]
//
// Uses REDIS_URL / MONGO_URL when set, else starts the embedded Redis and MongoDB engine.
import { runBench } from './lib/run.ts'
import { writeBenchSection } from './lib/report.ts'
import type { AddressInfo } from 'node:net'
import os from 'node:os'
import { parseArgs } from 'node:util'
import { listen } from '../../src/serve.ts'
import { ALL_INDEXES } from '../../src/services.ts'
import { flagsService } from '../../src/flags/service.ts'
import { loadConfig } from '../../src/platform/config.ts'
import { createPlatform } from '../../src/platform/platform.ts'
import { startMongoEngine } from '../../src/platform/embedded/mongo-engine.ts'
import { startRedisServer } from '../../src/platform/embedded/redis-server.ts'
import { fmt, load, startJsonEcho, startReference, type LoadResult } from './lib/http-load.ts'
import { FLAGS, PROJECTS, seedFlags } from './lib/flags-setup.ts'
import { seedRichFlags } from './lib/flags-rich.ts'
import { engineRates } from './lib/engine-rates.ts'

const { values } = parseArgs({ options: { duration: { type: 'string', default: '10' }, 'no-write': { type: 'boolean', default: false } } })
const DURATION = Number(values.duration)
const ROUNDS = 2

const MEMO_NOTE =
  'The per-operator rates cycle over 1,024 context values (the mixed workload over 4,096 users), so `matches`, ' +
  '`semver_*`, `before`/`after` and `in_cidr` answer mostly from their per-condition memo of the last 4,096 values ' +
  '(docs/flags.md); a value seen for the first time costs the regex run or parse (for RE2 and CIDR several times an `eq`).'

async function main() {
  const stops: Array<() => Promise<void>> = []
  const redisUrl = process.env.REDIS_URL ?? (await startRedisServer().then((r) => (stops.push(() => r.child.stop()), r.url)))
  const mongoUrl = process.env.MONGO_URL ?? (await startMongoEngine().then((m) => (stops.push(() => m.child.stop()), m.url)))
  try {
    const rates = engineRates()
    const engine = rates.engine
    console.log(`rule engine: ${fmt(engine, 0)} single-flag evaluations/s (one core)`)
    const ops = rates
    for (const [name, r] of ops.perOperator) console.log(`  operator ${name}: ${fmt(r, 0)} evaluations/s`)
    console.log(`  mixed workload (segment, semver, regex, numbers, not_in, 3-way split): ${fmt(ops.mixed, 0)} evaluations/s (${fmt(ops.mixed / engine, 2)} × the 3-rule engine rate)`)

    const config = loadConfig({ ...process.env, LOG_LEVEL: 'silent', MONGO_DB: `bench_flags_${Date.now()}`, QUEUE_PREFIX: `bench_flags_${Date.now()}` })
    const platform = await createPlatform({ config, redisUrl: redisUrl!, mongoUrl: mongoUrl!, indexes: ALL_INDEXES })
    const server = await listen(platform, flagsService, 0)
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`
    const requests = await seedFlags(platform, base)
    const richRequests = await seedRichFlags(platform, base, PROJECTS, FLAGS)

    // The machine is shared: references and evaluation alternate, and the best of each counts.
    // The reference gets the very requests evaluate gets (same load on the generator and the HTTP
    // parser); GET and the parse-and-answer floor are shown beside it to say where the rest goes.
    const evalAnswer = await (await fetch(`${base}/evaluate`, { method: 'POST', headers: requests[0]!.headers, body: requests[0]!.body })).text()
    const ref = await startReference({ ok: true })
    const floor = await startJsonEcho(evalAnswer)
    const root = base.replace(/\/api\/v1$/, '')
    const opts = { connections: 50, duration: DURATION, workers: 1 }
    const runs = {
      reference: { url: ref.url, requests },
      referenceGet: { url: ref.url },
      floor: { url: floor.url, requests },
      evaluate: { url: root, requests },
      evaluateRich: { url: root, requests: richRequests },
    }
    const results = Object.fromEntries(Object.keys(runs).map((k) => [k, [] as LoadResult[]])) as Record<keyof typeof runs, LoadResult[]>
    for (const target of Object.values(runs)) await load({ ...target, ...opts, duration: 2 }) // warm-up
    for (let round = 0; round < ROUNDS; round++) {
      for (const [name, target] of Object.entries(runs)) results[name as keyof typeof runs].push(await load({ ...target, ...opts }))
    }
    await ref.close()
    await floor.close()
    const best = (rs: LoadResult[]) => rs.reduce((a, b) => (b.rps > a.rps ? b : a))
    const reference = best(results.reference)
    const referenceGet = best(results.referenceGet)
    const floorBest = best(results.floor)
    const evaluate = best(results.evaluate)
    const rich = best(results.evaluateRich)
    const richRatio = rich.rps / reference.rps
    for (const [name, rs] of Object.entries(results)) console.log(`${name} runs: ${rs.map((r) => fmt(r.rps, 0)).join(', ')} req/s`)
    console.log(`reference (bare Koa, small JSON, same POST requests): ${fmt(reference.rps, 0)} req/s, p99 ${reference.p99} ms; GET: ${fmt(referenceGet.rps, 0)} req/s`)
    console.log(`floor (bare Koa reading + parsing the body, same-size answer): ${fmt(floorBest.rps, 0)} req/s`)
    const ratio = evaluate.rps / reference.rps
    console.log(
      `POST /api/v1/evaluate (10 flags × 3 rules): ${fmt(evaluate.rps, 0)} req/s, p50 ${evaluate.p50} ms, p99 ${evaluate.p99} ms, ` +
        `ratio ${fmt(ratio, 2)} (to GET ${fmt(evaluate.rps / referenceGet.rps, 2)}, to the floor ${fmt(evaluate.rps / floorBest.rps, 2)}), non-2xx ${evaluate.non2xx}, errors ${evaluate.errors}`,
    )
    console.log(`POST /api/v1/evaluate (10 flags: new operators, segment, variants): ${fmt(rich.rps, 0)} req/s, p99 ${rich.p99} ms, ratio ${fmt(richRatio, 2)}, non-2xx ${rich.non2xx}`)

    await new Promise<void>((r) => {
      server.close(() => r())
      server.closeAllConnections()
    })
    await platform.close()

    const verdict = (ok: boolean) => (ok ? 'met' : 'NOT met')
    const lines = [
      '## Feature flags: evaluation (`npm run bench:flags`)',
      '',
      `Run ${new Date().toISOString().slice(0, 10)} on ${os.cpus().length} shared cores (${os.cpus()[0]?.model.trim()}), Node ${process.version}, ` +
        `${process.env.MONGO_URL ? 'external MongoDB' : 'embedded MongoDB engine'}, ${process.env.REDIS_URL ? 'external' : 'embedded'} Redis. ` +
        `autocannon, 50 connections, ${DURATION} s, load generator in a worker thread, best of ${ROUNDS} alternating runs; ${PROJECTS} business-plan projects' SDK keys in rotation. Load average at start: ${os.loadavg()[0]!.toFixed(1)}.`,
      '',
      '| measurement | result | target | |',
      '|---|---|---|---|',
      `| rule engine, single-flag evaluations/s (one core, 3 rules, percent path) | ${fmt(engine, 0)} | ≥ 1,000,000 | ${verdict(engine >= 1_000_000)} |`,
      `| reference: bare Koa answering a small JSON body, sent the same POST requests | ${fmt(reference.rps, 0)} req/s, p99 ${reference.p99} ms | | |`,
      `| the same bare Koa app sent GET (no request body) | ${fmt(referenceGet.rps, 0)} req/s | | |`,
      `| floor: bare Koa that reads and parses the same body and answers a fixed text as long as evaluate's | ${fmt(floorBest.rps, 0)} req/s (${fmt(floorBest.rps / reference.rps, 2)} of the reference) | | |`,
      `| POST /api/v1/evaluate, 10 flags × 3 rules | ${fmt(evaluate.rps, 0)} req/s, p50 ${evaluate.p50} ms, p99 ${evaluate.p99} ms | | |`,
      `| throughput ratio evaluate / reference | ${fmt(ratio, 2)} | ≥ 0.7 | ${verdict(ratio >= 0.7)} |`,
      `| evaluate / GET reference; evaluate / floor | ${fmt(evaluate.rps / referenceGet.rps, 2)}; ${fmt(evaluate.rps / floorBest.rps, 2)} | | |`,
      `| evaluate p99 | ${evaluate.p99} ms | ≤ 10 ms | ${verdict(evaluate.p99 <= 10)} |`,
      `| evaluate non-2xx / errors | ${evaluate.non2xx} / ${evaluate.errors} | 0 | ${verdict(evaluate.non2xx + evaluate.errors === 0)} |`,
      ...ops.perOperator.map(([name, r]) => `| rule engine, one condition \`${name}\`, evaluations/s (one core) | ${fmt(r, 0)} | ≥ 3,000,000 | ${verdict(r >= 3_000_000)} |`),
      `| rule engine, mixed workload (segment + semver, regex + number, not_in + 3-way split, fallthrough split), evaluations/s (one core) | ${fmt(ops.mixed, 0)} | ≥ 3,000,000 | ${verdict(ops.mixed >= 3_000_000)} |`,
      `| mixed workload / 3-rule engine rate of the same run (a ratio that depends less on the machine's load) | ${fmt(ops.mixed / engine, 2)} | | |`,
      `| POST /api/v1/evaluate, 10 flags of that mixed workload | ${fmt(rich.rps, 0)} req/s, p50 ${rich.p50} ms, p99 ${rich.p99} ms | | |`,
      `| throughput ratio mixed evaluate / reference | ${fmt(richRatio, 2)} | ≥ 0.8 | ${verdict(richRatio >= 0.8)} |`,
      `| mixed evaluate non-2xx / errors | ${rich.non2xx} / ${rich.errors} | 0 | ${verdict(rich.non2xx + rich.errors === 0)} |`,
      '',
      'Every evaluation request authenticates the SDK key (hash lookup in memory), takes a rate-limit point from its ' +
        "replica's leased block (a Redis call only about once per 250 requests on the business plan) and evaluates " +
        'precompiled flags from the in-memory cache. POST /api/v1/evaluate is a hot route, answered before the general ' +
        'middleware stack with the same request id, metrics, access log and error answers (src/flags/evaluate-fast-path.ts, ' +
        'docs/flags.md); its answer is written from memoised pieces, with the other answers of its event-loop turn. ' +
        'The load generator shares the two cores with the server, so a request that makes the generator send a body and ' +
        'parse a longer answer costs twice. Compare ratios within one run.',
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
