// Where the p99 of POST /api/v1/evaluate comes from (docs/benchmarks.md, "Feature flags: where the
// p99 comes from"). Not a benchmark with a target: it measures the bare Koa reference and evaluate
// (10 flags × 3 rules, the requests of bench:flags) in interleaved rounds under each method —
// `unpinned` (every process on every core, as bench:flags measured until 2026-11-27) and `pinned`
// (the server under test and its Redis and store on one core, the load generator on the other,
// `taskset`) — at each number of connections, and prints per round median:
//  - autocannon's p50 / p90 / p99 / max (whole ms, truncated);
//  - the server's main thread: CPU ms and ms spent runnable but waiting for a core, per second of
//    the round (/proc/<pid>/schedstat), and the same for the load generator;
//  - the server's GC pauses (scavenges, mark-compacts: count, ms per second, longest) and event-loop
//    delay (p99, max) from inside its process (lib/loop-probe.mjs);
//  - the CPU the embedded Redis and store used during evaluate's rounds (lease refills, the flag
//    cache's version check, a usage flush).
//
//   npx tsx scripts/bench/flags-tail.ts [--duration 5] [--rounds 3] [--connections 50,10] [--methods unpinned,pinned]
//
// Ports and folders as every bench (docs/benchmarks.md, "Ports and folders"); REDIS_URL/MONGO_URL
// when set (their CPU is then not shown).
import type { AddressInfo } from 'node:net'
import { parseArgs } from 'node:util'
import { appClosed, listen } from '../../src/serve.ts'
import { ALL_INDEXES } from '../../src/collections.ts'
import { flagsService } from '../../src/flags/service.ts'
import { loadConfig } from '../../src/platform/config.ts'
import { createPlatform } from '../../src/platform/platform.ts'
import { benchMongo, benchPort, benchRedis } from './lib/bench-env.ts'
import { closeLoadGenerator, coreSplit, machineCpuMs, processesCpuMs, processTree, fmt, loadAverage, loadFailures, loadGeneratorPid, median, runLoad, setAffinity, startReferenceServer } from './lib/harness.ts'
import { seedFlags } from './lib/flags-setup.ts'
import { schedstat, startLoopProbe, type LoopStats } from './lib/loop-probe.mjs'
import { treeCpuMs } from './lib/proc-cpu.ts'
import { runBench } from './lib/run.ts'

const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '50,10' },
    methods: { type: 'string', default: 'unpinned,pinned' },
  },
})
const DURATION = Number(values.duration)
const ROUNDS = Number(values.rounds)
const CONNECTIONS = values.connections!.split(',').map(Number)

interface RoundStats {
  load: number
  rps: number
  failed: number
  p50: number
  p90: number
  p99: number
  max: number
  /** Per second of the round. */
  serverCpu: number
  serverWait: number
  generatorCpu: number
  generatorWait: number
  storesCpu: number
  /** CPU of every other process of the machine (the measured server, generator and stores taken out). */
  othersCpu: number
  loop: LoopStats
}

const cpuOf = (pids: number[]) => pids.reduce((n, pid) => n + treeCpuMs(pid), 0)

runBench(async () => {
  const stops: Array<() => Promise<void>> = []
  const storePids: number[] = []
  const redisUrl =
    process.env.REDIS_URL ?? (await benchRedis().then((r) => (stops.push(() => r.child.stop()), storePids.push(r.child.proc.pid!), r.url)))
  const mongoUrl =
    process.env.MONGO_URL ?? (await benchMongo().then((m) => (stops.push(() => m.child.stop()), storePids.push(m.child.proc.pid!), m.url)))
  const cores = coreSplit()
  const methods = values.methods!.split(',').filter((m) => m === 'unpinned' || cores.split !== null)
  if (!cores.split) console.log(`pinned method left out: ${cores.reason}`)
  try {
    const tag = `bench_flags_tail_${Date.now()}`
    const config = loadConfig({ ...process.env, LOG_LEVEL: 'silent', MONGO_DB: tag, QUEUE_PREFIX: tag })
    const platform = await createPlatform({ config, redisUrl: redisUrl!, mongoUrl: mongoUrl!, indexes: ALL_INDEXES })
    const server = await listen(platform, flagsService, await benchPort())
    const root = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    const requests = await seedFlags(platform, `${root}/api/v1`)
    const first = requests[0]!
    const answer = await (await fetch(`${root}${first.path}`, { method: 'POST', headers: first.headers, body: first.body })).text()
    const ref = await startReferenceServer(answer, { probe: true })
    const ours = startLoopProbe()

    interface Side {
      name: string
      run(seconds: number): Promise<RoundStats>
    }
    const side = (method: string, connections: number, who: 'reference' | 'evaluate'): Side => ({
      name: `${method} c${connections} ${who}`,
      async run(seconds) {
        const serverPids = who === 'reference' ? [ref.child.pid!] : [process.pid, ...storePids.flatMap(processTree)]
        const gen = loadGeneratorPid()
        if (cores.split) {
          const pinned = method === 'pinned'
          setAffinity(serverPids, pinned ? cores.split.server : cores.split.all)
          setAffinity([gen], pinned ? cores.split.generator : cores.split.all)
        }
        const main = who === 'reference' ? ref.child.pid! : process.pid
        const take = () => (who === 'reference' ? ref.probe() : Promise.resolve(ours.take()))
        await take()
        const load = loadAverage()
        const s0 = schedstat(main)
        const g0 = schedstat(gen)
        const st0 = cpuOf(storePids)
        const mine0 = processesCpuMs([...serverPids, gen])
        const m0 = machineCpuMs()
        const r = await runLoad({ url: who === 'reference' ? ref.url : root, requests }, { connections, duration: seconds })
        const s1 = schedstat(main)
        const g1 = schedstat(gen)
        const st1 = cpuOf(storePids)
        const mine1 = processesCpuMs([...serverPids, gen])
        const m1 = machineCpuMs()
        const loop = await take()
        const per = (a?: number, b?: number) => ((b ?? NaN) - (a ?? NaN)) / r.seconds
        return {
          load,
          rps: r.ok / r.seconds,
          failed: loadFailures(r).failed,
          p50: r.p50,
          p90: r.p90,
          p99: r.p99,
          max: r.max,
          serverCpu: per(s0?.runMs, s1?.runMs),
          serverWait: per(s0?.waitMs, s1?.waitMs),
          generatorCpu: per(g0?.runMs, g1?.runMs),
          generatorWait: per(g0?.waitMs, g1?.waitMs),
          storesCpu: who === 'evaluate' ? (st1 - st0) / r.seconds : NaN,
          othersCpu: Math.max(0, (m1 - m0 - (mine1 - mine0)) / r.seconds),
          loop,
        }
      },
    })
    const sides: Side[] = []
    for (const m of methods) for (const c of CONNECTIONS) sides.push(side(m, c, 'reference'), side(m, c, 'evaluate'))
    const results = new Map<Side, RoundStats[]>(sides.map((s) => [s, []]))
    for (const s of sides) {
      const w = await s.run(2)
      console.log(`warm-up ${s.name}: ${fmt(w.rps, 0)} req/s, p99 ${w.p99} ms`)
    }
    for (let i = 1; i <= ROUNDS; i++) {
      for (const s of sides) {
        const r = await s.run(DURATION)
        results.get(s)!.push(r)
        const gc = r.loop.gc
        console.log(
          `round ${i} ${s.name}: load ${r.load.toFixed(2)} → ${fmt(r.rps, 0)} req/s, p50 ${r.p50} p90 ${r.p90} p99 ${r.p99} max ${r.max} ms` +
            (r.failed ? `, ${r.failed} failed` : '') +
            `; server CPU ${fmt(r.serverCpu, 0)} ms/s, waits for a core ${fmt(r.serverWait, 0)} ms/s; generator CPU ${fmt(r.generatorCpu, 0)} ms/s, waits ${fmt(r.generatorWait, 0)} ms/s` +
            `; scavenges ${fmt(gc.minor.count / DURATION, 0)}/s ${fmt(gc.minor.ms / DURATION, 1)} ms/s max ${fmt(gc.minor.maxMs, 2)} ms, mark-compact ${gc.major.count} max ${fmt(gc.major.maxMs, 2)} ms` +
            `; loop delay p99 ${r.loop.loopDelay.p99} max ${r.loop.loopDelay.max} ms` +
            (Number.isNaN(r.storesCpu) ? '' : `; Redis + store CPU ${fmt(r.storesCpu, 1)} ms/s`) +
            `; other processes ${fmt(r.othersCpu, 0)} ms/s`,
        )
      }
    }
    ours.stop()
    await ref.close()
    await closeLoadGenerator()

    const m = (s: Side, pick: (r: RoundStats) => number, d = 1) => fmt(median(results.get(s)!.map(pick)), d)
    const lines = [
      `Load average (1 min) before the rounds: ${fmt(Math.min(...[...results.values()].flat().map((r) => r.load)), 1)}–${fmt(Math.max(...[...results.values()].flat().map((r) => r.load)), 1)}; ${ROUNDS} rounds of ${DURATION} s, medians of the rounds.`,
      '',
      '| method | connections | side | req/s | p50 / p90 / p99 / max (ms) | server CPU, waiting for a core (ms/s) | generator CPU, waiting (ms/s) | scavenges /s, ms/s, longest (ms) | mark-compacts, longest (ms) | loop delay p99 / max (ms) | Redis + store CPU (ms/s) | CPU of other processes (ms/s) |',
      '|---|---|---|---|---|---|---|---|---|---|---|---|',
      ...sides.map((s) => {
        const [method, conn, who] = s.name.split(' ')
        return (
          `| ${method} | ${conn!.slice(1)} | ${who} | ${m(s, (r) => r.rps, 0)} | ${m(s, (r) => r.p50, 0)} / ${m(s, (r) => r.p90, 0)} / ${m(s, (r) => r.p99, 0)} / ${m(s, (r) => r.max, 0)} ` +
          `| ${m(s, (r) => r.serverCpu, 0)}, ${m(s, (r) => r.serverWait, 0)} | ${m(s, (r) => r.generatorCpu, 0)}, ${m(s, (r) => r.generatorWait, 0)} ` +
          `| ${m(s, (r) => r.loop.gc.minor.count / DURATION, 0)}, ${m(s, (r) => r.loop.gc.minor.ms / DURATION, 1)}, ${m(s, (r) => r.loop.gc.minor.maxMs, 2)} ` +
          `| ${m(s, (r) => r.loop.gc.major.count, 0)}, ${m(s, (r) => r.loop.gc.major.maxMs, 2)} | ${m(s, (r) => r.loop.loopDelay.p99, 1)} / ${m(s, (r) => r.loop.loopDelay.max, 1)} ` +
          `| ${who === 'evaluate' && storePids.length ? m(s, (r) => r.storesCpu, 1) : ''} | ${m(s, (r) => r.othersCpu, 0)} |`
        )
      }),
    ]
    console.log('\n' + lines.join('\n'))
    await new Promise<void>((r) => {
      server.close(() => r())
      server.closeAllConnections()
    })
    await appClosed(server)
    await platform.close()
  } finally {
    for (const s of stops) await s()
  }
})
