// The shared harness of the HTTP benchmarks (docs/benchmarks.md, "How the benchmarks measure"):
// the load generator in a process of its own (autocannon, lib/load-child.mjs), the reference
// server in a process of its own (lib/reference-server.mjs), warm-up rounds that do not count,
// interleaved rounds (reference, ours, reference, ours, …) summarised as median and range, the
// load average printed before every round, and failed requests counted and reported, never fatal.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import os from 'node:os'
import type autocannon from 'autocannon'
import { benchPort } from './bench-env.ts'
import type { LoopStats } from './loop-probe.mjs'

export const fmt = (n: number, d = 1) => n.toLocaleString('en-US', { maximumFractionDigits: d })

/** The 1-minute load average: what else the machine was doing when a figure was taken. */
export const loadAverage = () => os.loadavg()[0]!

/**
 * One measured round of one side. `failed` counts every request that did not succeed. `rate` is
 * the round's figure in the side's unit: a throughput, or for a latency side its p50 (lower is
 * better then; see latencyRound).
 */
export interface Round {
  rate: number
  failed: number
  p50?: number
  p90?: number
  p99?: number
  /** Failures by kind (HTTP status, "errors", "timeouts"). */
  failures?: Record<string, number>
  /** The 1-minute load average just before the round. */
  load: number
  /** CPU ms per second that processes other than the measured ones used during the round (sides with an affinity). */
  othersCpu?: number
}

/** Something measured in rounds: an HTTP route under load, or a reference loop. */
export interface Side {
  name: string
  /** The unit of `rate`, e.g. "req/s". */
  unit: string
  round(seconds: number): Promise<Omit<Round, 'load'>>
}

export interface Summary {
  name: string
  unit: string
  rounds: Round[]
  median: number
  min: number
  max: number
  failed: number
  failures: Record<string, number>
  /** Medians of the rounds' percentiles (ms), where the side measures them. */
  p50?: number
  p90?: number
  p99?: number
}

export const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2
}

function summarise(side: Side, rounds: Round[]): Summary {
  const rates = rounds.map((r) => r.rate)
  const failures: Record<string, number> = {}
  for (const r of rounds) for (const [k, n] of Object.entries(r.failures ?? {})) failures[k] = (failures[k] ?? 0) + n
  const med = (pick: (r: Round) => number | undefined) => {
    const xs = rounds.flatMap((r) => (pick(r) === undefined ? [] : [pick(r)!]))
    return xs.length ? median(xs) : undefined
  }
  return {
    name: side.name,
    unit: side.unit,
    rounds,
    median: median(rates),
    min: Math.min(...rates),
    max: Math.max(...rates),
    failed: rounds.reduce((n, r) => n + r.failed, 0),
    failures,
    p50: med((r) => r.p50),
    p90: med((r) => r.p90),
    p99: med((r) => r.p99),
  }
}

/** Rounds per side and seconds per round unless a benchmark is told otherwise (docs/benchmarks.md). */
export const DEFAULT_ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
export const DEFAULT_SECONDS = Number(process.env.BENCH_ROUND_SECONDS ?? 5)

export interface InterleaveOptions {
  /** Measured rounds per side (at least 3). */
  rounds?: number
  seconds?: number
  /** Each side's warm-up round (not counted); 0 for none. */
  warmupSeconds?: number
  log?: (line: string) => void
}

/**
 * Measures the sides in interleaved rounds, so that a change of the machine's load falls on all
 * of them alike; one warm-up round each first. Returns each side's summary by name.
 */
export async function interleave(sides: Side[], opts: InterleaveOptions = {}): Promise<Record<string, Summary>> {
  const { rounds = DEFAULT_ROUNDS, seconds = DEFAULT_SECONDS, warmupSeconds = 2, log = console.log } = opts
  if (rounds < 3) throw new Error('at least 3 rounds: a median and a range need them')
  if (warmupSeconds > 0) {
    for (const side of sides) {
      log(`warm-up ${side.name} (${warmupSeconds} s, load ${loadAverage().toFixed(2)})`)
      const w = await side.round(warmupSeconds)
      if (w.failed) log(`  warm-up ${side.name}: ${w.failed} failed ${describeFailures(w.failures)}`)
    }
  }
  const results = new Map<Side, Round[]>(sides.map((s) => [s, []]))
  for (let i = 1; i <= rounds; i++) {
    for (const side of sides) {
      const load = loadAverage()
      const r = { ...(await side.round(seconds)), load }
      results.get(side)!.push(r)
      log(
        `round ${i}/${rounds} ${side.name}: load ${load.toFixed(2)} → ${fmt(r.rate)} ${side.unit}` +
          (r.p99 !== undefined ? `, p50 ${r.p50} ms, p99 ${r.p99} ms` : '') +
          (r.othersCpu !== undefined ? `, other processes' CPU ${fmt(r.othersCpu, 0)} ms/s` : '') +
          (r.failed ? `, ${r.failed} failed ${describeFailures(r.failures)}` : ''),
      )
    }
  }
  return Object.fromEntries(sides.map((s) => [s.name, summarise(s, results.get(s)!)]))
}

export function describeFailures(failures: Record<string, number> = {}): string {
  const parts = Object.entries(failures).map(([k, n]) => `${k}: ${n}`)
  return parts.length ? `(${parts.join(', ')})` : ''
}

/** "1,234 req/s (1,100–1,300)": the median and the range of the rounds. */
export const medianRange = (s: Summary, d = 0) => `${fmt(s.median, d)} ${s.unit} (${fmt(s.min, d)}–${fmt(s.max, d)})`

/** A latency side's median and range of the rounds' p50: "12.3 ms (9.8–15.1)". */
export const latencyRange = (s: Summary) => `${fmt(s.median)} ms (${fmt(s.min)}–${fmt(s.max)})`

/** The loads seen before the rounds of some summaries: "0.8–3.1". */
export function loadRange(...summaries: Summary[]): string {
  const loads = summaries.flatMap((s) => s.rounds.map((r) => r.load))
  return `${Math.min(...loads).toFixed(1)}–${Math.max(...loads).toFixed(1)}`
}

/** The ratio ours / reference of each interleaved round pair: median and range. */
export function ratio(ours: Summary, reference: Summary, perUnit = 1): { median: number; min: number; max: number; text: string } {
  const rs = ours.rounds.map((r, i) => r.rate / reference.rounds[i]!.rate / perUnit)
  const m = { median: median(rs), min: Math.min(...rs), max: Math.max(...rs) }
  return { ...m, text: `${fmt(m.median, 2)} (${fmt(m.min, 2)}–${fmt(m.max, 2)})` }
}

export interface LoadTarget {
  url: string
  method?: 'GET' | 'POST'
  headers?: Record<string, string>
  body?: string
  /** Requests cycled over (autocannon's `requests`); overrides method/headers/body. */
  requests?: Array<{ method: 'POST' | 'GET'; path: string; headers?: Record<string, string>; body?: string }>
}

export interface LoadRound {
  ok: number
  seconds: number
  /** Latency percentiles and maximum in whole ms, as autocannon records them (truncated). */
  p50: number
  p90: number
  p99: number
  max: number
  non2xx: number
  errors: number
  timeouts: number
  statuses: Record<string, number>
  /** CPU time the load generator itself used. */
  cpuMs: number
}

const LOAD_CHILD = fileURLToPath(new URL('./load-child.mjs', import.meta.url))
const REFERENCE_SERVER = fileURLToPath(new URL('./reference-server.mjs', import.meta.url))

interface Generator {
  child: ChildProcess
  answers: Array<(line: string) => void>
}
let generator: Generator | null = null
let pending: Promise<unknown> = Promise.resolve()

type Handle = { ref?: () => void; unref?: () => void }
/** While a round runs the generator keeps this process alive; idle, it must not keep a finished benchmark (or test run) alive. */
function hold(g: Generator, on: boolean): void {
  for (const h of [g.child, g.child.stdin, g.child.stdout] as unknown as Handle[]) (on ? h.ref : h.unref)?.call(h)
}

/** The load generator's process, started at the first round and kept (its start is not measured). */
function loadGenerator(): Generator {
  if (generator && generator.child.exitCode === null) return generator
  const child = spawn(process.execPath, [LOAD_CHILD], { stdio: ['pipe', 'pipe', 'inherit'] })
  const g: Generator = { child, answers: [] }
  let out = ''
  child.stdout!.on('data', (b: Buffer) => {
    out += b.toString()
    for (let nl = out.indexOf('\n'); nl >= 0; nl = out.indexOf('\n')) {
      const line = out.slice(0, nl)
      out = out.slice(nl + 1)
      g.answers.shift()?.(line)
      if (!g.answers.length) hold(g, false)
    }
  })
  child.once('exit', (code) => {
    for (const answer of g.answers.splice(0)) answer(JSON.stringify({ error: `load generator exited with ${code}` }))
  })
  hold(g, false)
  generator = g
  return g
}

/** The load generator's process id (started here if it is not running yet). */
export function loadGeneratorPid(): number {
  return loadGenerator().child.pid!
}

/** Ends the load generator's process (the next round starts a new one). */
export async function closeLoadGenerator(): Promise<void> {
  const g = generator
  generator = null
  if (!g || g.child.exitCode !== null) return
  hold(g, true)
  await new Promise((r) => (g.child.once('exit', r), g.child.stdin!.end()))
}

/**
 * One autocannon run in the load generator's process: for `duration` seconds or `amount`
 * requests. `timeout` (s) is how long one request may take before it counts as a timeout.
 * Rounds run one at a time.
 */
export function runLoad(target: LoadTarget, opts: { connections: number; duration?: number; amount?: number; timeout?: number }): Promise<LoadRound> {
  const options = { ...target, ...opts, timeout: opts.timeout ?? 10 } as autocannon.Options
  const run = pending.then(
    () =>
      new Promise<LoadRound>((resolve, reject) => {
        const g = loadGenerator()
        g.answers.push((line) => {
          const r = JSON.parse(line) as LoadRound & { error?: string }
          if (r.error) reject(new Error(`load generator: ${r.error}`))
          else resolve(r)
        })
        hold(g, true)
        g.child.stdin!.write(JSON.stringify(options) + '\n')
      }),
  )
  pending = run.catch(() => undefined)
  return run
}

/** The failures of a load round by kind, and their count. */
export function loadFailures(r: LoadRound): { failed: number; failures: Record<string, number> } {
  const failures: Record<string, number> = { ...r.statuses }
  if (r.errors) failures.errors = r.errors
  if (r.timeouts) failures.timeouts = r.timeouts
  // autocannon counts a timeout among its errors too.
  return { failed: r.non2xx + r.errors, failures }
}

/**
 * Which cores a round gives the server under test (`pids`: its processes, each with all its
 * threads) and which the load generator, set before each round of the side (coreSplit()).
 */
export interface Affinity {
  pids: () => number[]
  server: string
  generator: string
  /**
   * Processes that serve the server under test without being it (its embedded Redis and store):
   * given the generator's cores, so the server's core holds the server alone, as the reference's
   * does (in production they run on other machines).
   */
  beside?: () => number[]
}

/** An HTTP side: successful answers per second under `connections` concurrent connections. */
export function httpSide(name: string, target: LoadTarget, opts: { connections: number; timeout?: number; after?: () => Promise<void>; affinity?: Affinity }): Side {
  return {
    name,
    unit: 'req/s',
    async round(seconds) {
      const measured = opts.affinity && [...opts.affinity.pids(), loadGeneratorPid()]
      if (opts.affinity) {
        setAffinity(opts.affinity.pids(), opts.affinity.server)
        setAffinity([loadGeneratorPid(), ...(opts.affinity.beside?.() ?? [])], opts.affinity.generator)
      }
      const others0 = measured && othersCpuMs(measured)
      const r = await runLoad(target, { connections: opts.connections, duration: seconds, timeout: opts.timeout })
      const othersCpu = measured && Math.max(0, (othersCpuMs(measured) - others0!) / r.seconds)
      await opts.after?.()
      return { rate: r.ok / r.seconds, p50: r.p50, p90: r.p90, p99: r.p99, othersCpu: Number.isNaN(othersCpu) ? undefined : othersCpu, ...loadFailures(r) }
    },
  }
}

/** The CPUs this process may run on (Linux: /proc/self/status), e.g. [0, 1]; undefined elsewhere. */
function allowedCpus(): { list: string; ids: number[] } | undefined {
  try {
    const list = /^Cpus_allowed_list:\s*(\S+)/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1]
    if (!list) return undefined
    const ids = list.split(',').flatMap((part) => {
      const [a, b] = part.split('-').map(Number)
      return b === undefined ? [a!] : Array.from({ length: b - a! + 1 }, (_, i) => a! + i)
    })
    return { list, ids }
  } catch {
    return undefined
  }
}

/**
 * The split of the cores for a fair latency measurement on a small machine (docs/benchmarks.md,
 * "How the benchmarks measure"): the server under test on the first core this process may use,
 * the load generator on the second, `all` to undo it. `split` is null, with the reason, without
 * `taskset` (Debian: util-linux) or a second core.
 */
export function coreSplit(): { split: { server: string; generator: string; all: string } } | { split: null; reason: string } {
  const cpus = allowedCpus()
  if (!cpus) return { split: null, reason: 'the CPUs this process may use are unknown (no /proc/self/status)' }
  if (cpus.ids.length < 2) return { split: null, reason: `only one core (${cpus.list}) is available` }
  try {
    execFileSync('taskset', ['-V'], { stdio: 'ignore' })
  } catch {
    return { split: null, reason: 'taskset (util-linux) is not installed' }
  }
  return { split: { server: String(cpus.ids[0]), generator: String(cpus.ids[1]), all: cpus.list } }
}

/**
 * CPU time the whole machine has used so far (ms, all cores, from /proc/stat; NaN elsewhere):
 * diffed around a round and less the measured processes' own, what other processes took meanwhile.
 */
export function machineCpuMs(): number {
  try {
    const cpu = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!.trim().split(/\s+/).slice(1).map(Number)
    // user nice system idle iowait irq softirq steal …: everything but idle and iowait was busy.
    const busy = cpu.reduce((a, b) => a + b, 0) - cpu[3]! - cpu[4]!
    return busy * 10 // USER_HZ is 100 on Linux
  } catch {
    return NaN
  }
}

/** CPU ms a process (all its threads, not its children) has used so far; 0 once it is gone. */
function ownCpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return (Number(f[11]) + Number(f[12])) * 10 // utime + stime in USER_HZ (100) ticks
  } catch {
    return 0
  }
}

/** CPU ms used so far by these processes, each counted once (threads included, children not). */
export function processesCpuMs(pids: number[]): number {
  return [...new Set(pids)].reduce((n, pid) => n + ownCpuMs(pid), 0)
}

/** The machine's CPU time (ms) so far less that of the `pids` processes: what everything else used. */
function othersCpuMs(pids: number[]): number {
  return machineCpuMs() - processesCpuMs(pids)
}

/** A process and every process below it (an embedded store's guard and its server, say). */
export function processTree(pid: number): number[] {
  const out = [pid]
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      const text = readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').trim()
      if (text) for (const c of text.split(' ')) out.push(...processTree(Number(c)))
    }
  } catch {
    // gone meanwhile
  }
  return out
}

/**
 * Sets the cores of processes and all their threads (`taskset -a -p -c`); threads and processes
 * they start later inherit them. Child processes already running are not changed: list them
 * (processTree) where they belong to the server under test.
 */
export function setAffinity(pids: number[], cpus: string): void {
  for (const pid of pids) execFileSync('taskset', ['-a', '-p', '-c', cpus, String(pid)], { stdio: 'ignore' })
}

export interface ReferenceServer {
  url: string
  child: ChildProcess
  close(): Promise<void>
  /** With `probe: true`: its event loop and GC since the last call (loop-probe.mjs). */
  probe(): Promise<LoopStats>
}

export interface ReferenceOptions {
  port?: number
  /** How it reads a POST body: parsed as JSON (the default) or kept raw with its lower-cased text, as a capture is. */
  body?: 'json' | 'raw'
  /** After answering, POST the body on to this URL (a forwarder without queue or storage). */
  forwardTo?: string
  /** Observe its own event loop and GC (ReferenceServer.probe). */
  probe?: boolean
}

/**
 * The reference server (lib/reference-server.mjs) in its own process, answering `answer`; it also
 * holds event streams (GET …/endpoints/<token>/stream) told of every POST /hook/<token>.
 */
export async function startReferenceServer(answer: string, opts: ReferenceOptions = {}): Promise<ReferenceServer> {
  const env: NodeJS.ProcessEnv = { ...process.env, QW_REF_ANSWER: answer, QW_REF_PORT: String(opts.port ?? (await benchPort())), QW_REF_BODY: opts.body ?? 'json' }
  if (opts.forwardTo) env.QW_REF_FORWARD = opts.forwardTo
  else delete env.QW_REF_FORWARD
  if (opts.probe) env.QW_REF_PROBE = '1'
  else delete env.QW_REF_PROBE
  const child = spawn(process.execPath, [REFERENCE_SERVER], {
    env,
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const probes: Array<(stats: LoopStats) => void> = []
  const url = await new Promise<string>((resolve, reject) => {
    let out = ''
    child.stdout!.on('data', (b: Buffer) => {
      out += b.toString()
      for (let nl = out.indexOf('\n'); nl >= 0; nl = out.indexOf('\n')) {
        const line = out.slice(0, nl)
        out = out.slice(nl + 1)
        const m = /^listening (\S+)/.exec(line)
        if (m) resolve(m[1]!)
        else if (line.startsWith('probe ')) probes.shift()?.(JSON.parse(line.slice(6)) as LoopStats)
      }
    })
    child.once('exit', (code) => reject(new Error(`reference server exited with ${code}`)))
  })
  return {
    url,
    child,
    close: () => new Promise((r) => (child.exitCode !== null ? r() : (child.once('exit', () => r()), child.kill('SIGTERM')))),
    probe: () =>
      new Promise<LoopStats>((resolve, reject) => {
        if (!opts.probe) return reject(new Error('the reference server was started without probe: true'))
        probes.push(resolve)
        child.kill('SIGUSR2')
      }),
  }
}

/** Latency percentile (ms) of sorted values; NaN when there are none. */
export const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN

/**
 * A latency side's round from its measured latencies (ms): the figure is the p50 (unit "ms p50"),
 * so median and range are those of the rounds' p50s and `ratio` is ours / reference (a slowdown).
 */
export function latencyRound(latencies: number[], failures: Record<string, number>): Omit<Round, 'load'> {
  const sorted = [...latencies].sort((a, b) => a - b)
  const r = (x: number) => Math.round(x * 10) / 10
  return { rate: percentile(sorted, 50), p50: r(percentile(sorted, 50)), p99: r(percentile(sorted, 99)), failed: Object.values(failures).reduce((a, b) => a + b, 0), failures }
}
