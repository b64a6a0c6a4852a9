// The rule engine's evaluations per second, one case per process: run as
// `tsx scripts/bench/lib/engine-rates.ts <case>` it prints `{"rate": …}`. Each case gets a fresh
// V8 so the JIT state left by one case (call sites made polymorphic by other flag shapes) does
// not decide another's figure; `engineRates()` runs them one after another from the benchmark.
import { execFileSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { compileFlag, normalizeContext, type CompiledFlag, type EvalContext } from '../../../src/flags/engine/rules.ts'
import { FLAGS, flagDef } from './flags-setup.ts'
import { OPERATOR_CASES, RICH_SEGMENT, richContext, richFlagDef } from './flags-rich.ts'

/** Evaluations per second of `flags` over `contexts`, after a JIT warm-up. */
function rate(flags: CompiledFlag[], contexts: EvalContext[], hit: number, n = 3_000_000): number {
  let sink = 0
  const nf = flags.length
  const nc = contexts.length
  const run = (k: number) => {
    for (let i = 0; i < k; i++) if (flags[i % nf]!.evaluate(contexts[i % nc]!).rule_index === hit) sink++
  }
  run(200_000)
  const t0 = performance.now()
  run(n)
  const s = (performance.now() - t0) / 1000
  if (sink < 0) console.log(sink)
  return n / s
}

export const ENGINE = 'engine'
export const MIXED = 'mixed'

function measure(name: string): number {
  if (name === ENGINE) {
    // Contexts that fall through to the percent rule: the most expensive path (two misses, a hash).
    const flags = Array.from({ length: FLAGS }, (_, i) => compileFlag(flagDef(i)))
    const contexts = Array.from({ length: 4_096 }, (_, i) => normalizeContext({ user_id: `user-${i}`, country: 'FR', plan: 'free' }))
    return rate(flags, contexts, 2)
  }
  if (name === MIXED) {
    const segments = new Map([[RICH_SEGMENT.name, RICH_SEGMENT.conditions]])
    const flags = Array.from({ length: FLAGS }, (_, i) => compileFlag(richFlagDef(i), segments))
    const contexts = Array.from({ length: 4_096 }, (_, i) => normalizeContext(richContext(i)))
    return rate(flags, contexts, 0)
  }
  const c = OPERATOR_CASES.find((x) => x.name === name)
  if (!c) throw new Error(`unknown engine case ${name}`)
  const f = compileFlag({ key: 'op', enabled: true, type: 'boolean', default_value: false, rules: [{ conditions: [c.condition], value: true }] })
  const contexts = Array.from({ length: 1_024 }, (_, i) => normalizeContext({ x: c.value(i) }))
  return rate([f], contexts, 0)
}

/** Every case, each in its own process, one after another (never two at once: they would share the cores). */
export function engineRates(): { engine: number; perOperator: [string, number][]; mixed: number } {
  const self = fileURLToPath(import.meta.url)
  const one = (name: string): number =>
    JSON.parse(execFileSync(process.execPath, ['--import', 'tsx', self, name], { encoding: 'utf8' })).rate
  return { engine: one(ENGINE), perOperator: OPERATOR_CASES.map((c) => [c.name, one(c.name)]), mixed: one(MIXED) }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) console.log(JSON.stringify({ rate: measure(process.argv[2] ?? ENGINE) }))
