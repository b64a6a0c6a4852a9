// Server CPU per evaluate request, the steadier companion of bench:flags (Linux: reads /proc).
// On the shared harness (lib/harness.ts): autocannon in its own process, a warm-up round per side,
// then interleaved rounds (reference, evaluate, …) with the load average before each and every
// failed request counted. Each server runs in its own process, so the CPU time a server process
// spends (user and system, all its threads) divided by the requests it answered is that server's
// cost per request, whatever else the machine is doing. Both are sent the same evaluate requests
// (50 connections):
//   reference   lib/reference-server.mjs: bare Koa reading and parsing the same body and answering
//               a text as long as evaluate's (what any Koa handler of this request shape costs at least);
//   evaluate    the flag service (embedded Redis and MongoDB engine unless REDIS_URL/MONGO_URL).
// Prints throughput, CPU µs per request and the ratios to the reference: median and range.
//
//   npm run bench:flags-cpu [-- --duration 5 --rounds 3 --no-write]
import { benchMongo, benchPort, benchRedis } from './lib/bench-env.ts'
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import type { AddressInfo } from 'node:net'
import os from 'node:os'
import readline from 'node:readline'
import { parseArgs } from 'node:util'
import { DEFAULT_ROUNDS, DEFAULT_SECONDS, describeFailures, fmt, interleave, loadFailures, loadRange, median, medianRange, ratio, runLoad, startReferenceServer, type Side, type Summary } from './lib/harness.ts'
import type { EvaluateRequest } from './lib/flags-setup.ts'
import { writeBenchSection } from './lib/report.ts'
import { runBench } from './lib/run.ts'

/** The measured service, in the process `serve` runs in. */
async function serve(): Promise<{ url: string; requests: EvaluateRequest[] }> {
  const { listen } = await import('../../src/serve.ts')
  const { ALL_INDEXES } = await import('../../src/collections.ts')
  const { flagsService } = await import('../../src/flags/service.ts')
  const { loadConfig } = await import('../../src/platform/config.ts')
  const { createPlatform } = await import('../../src/platform/platform.ts')
  const { seedFlags } = await import('./lib/flags-setup.ts')
  const stops: Array<() => Promise<void>> = []
  const redisUrl = process.env.REDIS_URL ?? (await benchRedis().then((r) => (stops.push(() => r.child.stop()), r.url)))
  const mongoUrl = process.env.MONGO_URL ?? (await benchMongo().then((m) => (stops.push(() => m.child.stop()), m.url)))
  process.once('SIGTERM', () => void Promise.all(stops.map((s) => s())).finally(() => process.exit(0)))
  const tag = `bench_flags_cpu_${Date.now()}`
  const config = loadConfig({ ...process.env, LOG_LEVEL: 'silent', MONGO_DB: tag, QUEUE_PREFIX: tag })
  const platform = await createPlatform({ config, redisUrl: redisUrl!, mongoUrl: mongoUrl!, indexes: ALL_INDEXES })
  const server = await listen(platform, flagsService, await benchPort())
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return { url, requests: await seedFlags(platform, `${url}/api/v1`) }
}

/** CPU time (µs) of a process so far, from /proc/<pid>/stat (clock ticks of 10 ms). */
function cpuMicros(pid: number): { user: number; system: number } {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
  return { user: Number(fields[11]) * 10_000, system: Number(fields[12]) * 10_000 }
}

async function main() {
  const { values } = parseArgs({
    options: { duration: { type: 'string', default: String(DEFAULT_SECONDS) }, rounds: { type: 'string', default: String(DEFAULT_ROUNDS) }, 'no-write': { type: 'boolean', default: false } },
  })
  const duration = Number(values.duration)
  const rounds = Number(values.rounds)
  // The service and its embedded Redis/engine take their ports from BENCH_PORT_BASE + 10 on; the reference from the base.
  const env = process.env.BENCH_PORT_BASE ? { ...process.env, BENCH_PORT_BASE: String(Number(process.env.BENCH_PORT_BASE) + 10) } : process.env
  const child = spawn(process.execPath, ['--import', 'tsx', import.meta.filename, 'serve'], { env, stdio: ['ignore', 'pipe', 'inherit'] })
  const stopChild = () => (child.exitCode !== null ? Promise.resolve() : new Promise((r) => (child.once('exit', r), child.kill('SIGTERM'))))
  let reference: Awaited<ReturnType<typeof startReferenceServer>> | undefined
  try {
    const line = await new Promise<string>((resolve, reject) => {
      readline.createInterface({ input: child.stdout! }).once('line', resolve)
      child.once('exit', (code) => reject(new Error(`evaluate server exited (${code})`)))
    })
    const evaluate = JSON.parse(line) as { url: string; requests: EvaluateRequest[] }
    const first = evaluate.requests[0]!
    const answer = await (await fetch(`${evaluate.url}${first.path}`, { method: 'POST', headers: first.headers, body: first.body })).text()
    reference = await startReferenceServer(answer)
    // CPU µs per answered request of each side's server process, per round (user, system).
    const cpu = new Map<string, Array<{ user: number; system: number }>>()
    const calls = new Map<string, number>()
    const side = (name: string, pid: number, url: string): Side => ({
      name,
      unit: 'req/s',
      async round(seconds) {
        const before = cpuMicros(pid)
        const r = await runLoad({ url, requests: evaluate.requests }, { connections: 50, duration: seconds })
        const after = cpuMicros(pid)
        // Counted per request answered, failed ones included: the server spent its CPU on them too.
        const n = Math.max(1, r.ok + r.non2xx)
        // The first call is the warm-up round (not counted).
        if ((calls.set(name, (calls.get(name) ?? 0) + 1).get(name) ?? 0) > 1) (cpu.get(name) ?? cpu.set(name, []).get(name)!).push({ user: (after.user - before.user) / n, system: (after.system - before.system) / n })
        return { rate: r.ok / r.seconds, p50: r.p50, p99: r.p99, ...loadFailures(r) }
      },
    })
    const results = await interleave([side('reference', reference.child.pid!, reference.url), side('evaluate', child.pid!, evaluate.url)], { rounds, seconds: duration, warmupSeconds: 2 })
    const ref = results.reference!
    const ev = results.evaluate!
    const per = (name: string) => cpu.get(name)!.map((c) => c.user + c.system)
    const sys = (name: string) => median(cpu.get(name)!.map((c) => c.system))
    const cpuText = (name: string) => `${fmt(median(per(name)))} µs (${fmt(Math.min(...per(name)))}–${fmt(Math.max(...per(name)))})`
    const cpuRatios = per('evaluate').map((c, i) => c / per('reference')[i]!)
    const failed = (s: Summary) => (s.failed ? `${s.failed} ${describeFailures(s.failures)}` : '0')
    const lines = [
      '## Feature flags: server CPU per evaluate request (`npm run bench:flags-cpu`)',
      '',
      `Run ${new Date().toISOString().slice(0, 16)}Z on ${os.cpus().length} shared cores (${os.cpus()[0]?.model.trim() ?? 'cpu'}), Node ${process.version}. ` +
        `Each server runs in a process of its own and autocannon (50 connections, the evaluate requests of bench:flags) in another (shared harness: a 2 s warm-up round per side, ` +
        `then ${rounds} interleaved rounds of ${duration} s, median (range) of the rounds). A server's CPU time (all its threads, user + system, from /proc) divided by the requests it answered ` +
        `is its cost per request, a figure that depends much less than throughput on how the cores are shared. Load average (1 min) before the rounds: ${loadRange(ref, ev)}.`,
      '',
      '| server | req/s | CPU per request | of which system | failed |',
      '|---|---|---|---|---|',
      `| reference: bare Koa in its own process, reads and parses the same body, answers a text as long as evaluate's | ${medianRange(ref)} | ${cpuText('reference')} | ${fmt(sys('reference'))} µs | ${failed(ref)} |`,
      `| POST /api/v1/evaluate, 10 flags × 3 rules | ${medianRange(ev)} | ${cpuText('evaluate')} | ${fmt(sys('evaluate'))} µs | ${failed(ev)} |`,
      `| evaluate / reference, per round pair | ${ratio(ev, ref).text} | ${fmt(median(cpuRatios), 2)} (${fmt(Math.min(...cpuRatios), 2)}–${fmt(Math.max(...cpuRatios), 2)}) | | |`,
      '',
      `Per round (load average before it → req/s, CPU µs per request): ${[ref, ev]
        .map((s) => `${s.name} ${s.rounds.map((x, i) => `${x.load.toFixed(1)} → ${fmt(x.rate, 0)}, ${fmt(per(s.name)[i]!)} µs`).join('; ')}`)
        .join(' | ')}.`,
      '',
    ]
    console.log(`\n${lines.join('\n')}`)
    if (!values['no-write']) writeBenchSection(lines.join('\n'))
  } finally {
    await reference?.close()
    await stopChild()
  }
}

if (process.argv[2] === 'serve') {
  serve().then(
    (s) => process.stdout.write(`${JSON.stringify(s)}\n`),
    (err) => {
      console.error(err)
      process.exit(1)
    },
  )
} else {
  runBench(main)
}
