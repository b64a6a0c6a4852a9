// The rule engine's evaluations per second, one case per process: run as
// `tsx scripts/bench/lib/engine-rates.ts <case>` it prints `{"rate": …, "wall": …}`. Each case gets a fresh
// V8 so the JIT state left by one case (call sites made polymorphic by other flag shapes) does
// not decide another's figure; `engineRates()` runs them one after another from the benchmark.
// `rate` is per second of the process's CPU time (process.cpuUsage), i.e. per core-second: on
// this shared machine the wall-clock rate (`wall`) mostly says how much of a core the process
// was given (the same code measured 3.5–9.8 M/s by the clock and 7.8–8.8 by CPU time at load 6–8).
import { execFileSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { compileFlag, normalizeContext, type CompiledFlag, type EvalContext } from '../../../src/flags/engine/rules.ts'
import { FLAGS, flagDef } from './flags-setup.ts'
import { OPERATOR_CASES, RICH_SEGMENT, richContext, richFlagDef } from './flags-rich.ts'

export interface Rate {
  /** Evaluations per second of CPU time. */
  rate: number
  /** Evaluations per second of wall-clock time. */
  wall: number
}

/** Evaluations per second of `flags` over `contexts`, after a JIT warm-up. */
function rate(flags: CompiledFlag[], contexts: EvalContext[], hit: number, n = 3_000_000): Rate {
  let sink = 0
  const nf = flags.length
  const nc = contexts.length
  const run = (k: number) => {
    for (let i = 0; i < k; i++) if (flags[i % nf]!.evaluate(contexts[i % nc]!).rule_index === hit) sink++
  }
  run(200_000)
  const cpu0 = process.cpuUsage()
  const t0 = performance.now()
  run(n)
  const s = (performance.now() - t0) / 1000
  const cpu = process.cpuUsage(cpu0)
  if (sink < 0) console.log(sink)
  return { rate: n / ((cpu.user + cpu.system) / 1e6), wall: n / s }
}

export const ENGINE = 'engine'
export const MIXED = 'mixed'
/** The mixed workload's contexts (bench:flags-provider evaluates the same ones). */
export const MIXED_CONTEXTS = 4_096

function measure(name: string): Rate {
  if (name === ENGINE) {
    // Contexts that fall through to the percent rule: the most expensive path (two misses, a hash).
    const flags = Array.from({ length: FLAGS }, (_, i) => compileFlag(flagDef(i)))
    const contexts = Array.from({ length: 4_096 }, (_, i) => normalizeContext({ user_id: `user-${i}`, country: 'FR', plan: 'free' }))
    return rate(flags, contexts, 2)
  }
  if (name === MIXED) {
    const segments = new Map([[RICH_SEGMENT.name, RICH_SEGMENT.conditions]])
    const flags = Array.from({ length: FLAGS }, (_, i) => compileFlag(richFlagDef(i), segments))
    const contexts = Array.from({ length: MIXED_CONTEXTS }, (_, i) => normalizeContext(richContext(i)))
    return rate(flags, contexts, 0)
  }
  const c = OPERATOR_CASES.find((x) => x.name === name)
  if (!c) throw new Error(`unknown engine case ${name}`)
  const f = compileFlag({ key: 'op', enabled: true, type: 'boolean', default_value: false, rules: [{ conditions: [c.condition], value: true }] })
  const contexts = Array.from({ length: 1_024 }, (_, i) => normalizeContext({ x: c.value(i) }))
  return rate([f], contexts, 0)
}

/** Every case, each in its own process, one after another (never two at once: they would share the cores). */
export function engineRates(): { engine: number; perOperator: [string, number][]; mixed: number; wall: { engine: number; mixed: number } } {
  const self = fileURLToPath(import.meta.url)
  const one = (name: string): Rate => JSON.parse(execFileSync(process.execPath, ['--import', 'tsx', self, name], { encoding: 'utf8' }))
  const engine = one(ENGINE)
  const perOperator = OPERATOR_CASES.map((c): [string, number] => [c.name, one(c.name).rate])
  const mixed = one(MIXED)
  return { engine: engine.rate, perOperator, mixed: mixed.rate, wall: { engine: engine.wall, mixed: mixed.wall } }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) console.log(JSON.stringify(measure(process.argv[2] ?? ENGINE)))
