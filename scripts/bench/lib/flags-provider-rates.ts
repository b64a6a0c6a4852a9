// bench:flags-provider's evaluation rates, one case per process (as lib/engine-rates.ts takes the
// engine's): run as `tsx scripts/bench/lib/flags-provider-rates.ts <case> <flags> [url serverKey]`
// it prints `{"rate": …, "wall": …}`. The cases evaluate the mixed workload of the engine figure
// (lib/flags-rich.ts: `flags` rich flags, the same 4,096 contexts, flag i % flags with context
// i % 4096), measured alike (`rate`: warm-up, then the best of WINDOWS windows):
//   engine    the rule engine alone over contexts normalised beforehand: engine-rates.ts's
//             `mixed` case, the workload and code of bench:flags' figure
//   provider  QueueworksProvider.resolve over the caller's contexts as given (connected to the
//             service at `url`, its project holding the same flags)
//   client    a whole OpenFeature call, `client.getStringDetails` awaited (SDK hooks, promise)
//   flagd     @openfeature/flagd-core's in-process evaluator over the same flags as JSON Logic
// A fresh process per case keeps one case's JIT state (call sites made polymorphic by the others)
// and the benchmark's own modules out of another's figure: in the benchmark's process (the
// platform loaded), the same engine loop measured 2.5-4.9 M/s where a bare process measured 8.5,
// alternating at the same load.
import { fileURLToPath } from 'node:url'
import { OpenFeature } from '@openfeature/server-sdk'
import { FlagdCore } from '@openfeature/flagd-core'
import { QueueworksProvider } from '../../../packages/openfeature-provider/src/index.ts'
import { MIXED_CONTEXTS, type Rate } from './engine-rates.ts'
import { compileFlag, normalizeContext } from '../../../src/flags/engine/rules.ts'
import { RICH_SEGMENT, richContext, richFlagDef } from './flags-rich.ts'

/**
 * Calls per CPU second (process.cpuUsage: this process's core-seconds) and per second by the
 * clock of `f(i)`: a JIT warm-up, then WINDOWS windows of `n` calls, the best window kept. One
 * loop serves the warm-up and the windows, so the measured call site is the warmed one. Windows,
 * because on this shared machine a process's rate can drop to about half for hundreds of
 * milliseconds and back (other processes' work on the same cores and caches), while the code
 * measured does not change: the same engine loop measured 11.4 M/s, then 6-7 for the rest of the
 * run, in one process at load 5.7.
 */
function rate(f: (i: number) => unknown, n: number): Rate {
  let sink = 0
  const run = (k: number) => {
    for (let i = 0; i < k; i++) if (f(i)) sink++
  }
  run(Math.max(200_000, n))
  let best: Rate = { rate: 0, wall: 0 }
  for (let w = 0; w < WINDOWS; w++) {
    const cpu0 = process.cpuUsage()
    const t0 = performance.now()
    run(n)
    const s = (performance.now() - t0) / 1000
    const cpu = process.cpuUsage(cpu0)
    const r = n / ((cpu.user + cpu.system) / 1e6)
    if (r > best.rate) best = { rate: r, wall: n / s }
  }
  if (sink < 0) console.log(sink)
  return best
}

export const WINDOWS = 5

async function asyncRate(f: (i: number) => Promise<unknown>, n: number): Promise<Rate> {
  for (let i = 0; i < 20_000; i++) await f(i)
  const cpu0 = process.cpuUsage()
  const t0 = performance.now()
  for (let i = 0; i < n; i++) await f(i)
  const s = (performance.now() - t0) / 1000
  const cpu = process.cpuUsage(cpu0)
  return { rate: n / ((cpu.user + cpu.system) / 1e6), wall: n / s }
}

/**
 * The rich flags (lib/flags-rich.ts) as flagd flags: the same rules, segment folded in, the regex
 * `^qa-` as flagd's starts_with (it has no regular expressions), splits as `fractional` over user_id.
 */
export function flagdConfig(n: number): string {
  const flags: Record<string, unknown> = {}
  for (let i = 0; i < n; i++) {
    flags[`rich-${i}`] = {
      state: 'ENABLED',
      variants: { internal: 'internal', qa: 'qa', blue: 'blue', green: 'green', red: 'red', control: 'control', treatment: 'treatment' },
      defaultVariant: 'control',
      targeting: {
        if: [
          { and: [{ sem_ver: [{ var: 'app_version' }, '>=', '3.0.0'] }, { ends_with: [{ var: 'email' }, '@corp.example'] }] },
          'internal',
          { and: [{ starts_with: [{ var: 'user_id' }, 'qa-'] }, { '>=': [{ var: 'age' }, 18] }] },
          'qa',
          { '!': { in: [{ var: 'country' }, ['US', 'CA']] } },
          { fractional: [{ var: 'user_id' }, ['blue', 50], ['green', 30], ['red', 20]] },
          { fractional: [{ var: 'user_id' }, ['control', 90], ['treatment', 10]] },
        ],
      },
    }
  }
  return JSON.stringify({ flags })
}

export const ENGINE = 'engine'
export const PROVIDER = 'provider'
export const CLIENT = 'client'
export const FLAGD = 'flagd'

async function measure(name: string, nf: number, url: string, serverKey: string): Promise<Rate> {
  const keys = Array.from({ length: nf }, (_, i) => `rich-${i}`)
  const contexts = Array.from({ length: MIXED_CONTEXTS }, (_, i) => richContext(i))
  const nc = contexts.length
  if (name === ENGINE) {
    // engine-rates.ts's mixed case (bench:flags' figure): compiled flags, contexts normalised beforehand.
    const segments = new Map([[RICH_SEGMENT.name, RICH_SEGMENT.conditions]])
    const flags = Array.from({ length: nf }, (_, i) => compileFlag(richFlagDef(i), segments))
    const normalised = contexts.map((c) => normalizeContext(c))
    return rate((i) => flags[i % nf]!.evaluate(normalised[i % nc]!).rule_index === 0, 1_000_000)
  }
  if (name === FLAGD) {
    const flagd = new FlagdCore()
    flagd.setConfigurations(flagdConfig(nf))
    const probe = flagd.resolveStringEvaluation('rich-0', '', contexts[0]!)
    if (probe.reason === 'ERROR' || !['blue', 'green', 'red'].includes(probe.value)) throw new Error(`flagd-core did not evaluate the rich flag: ${JSON.stringify(probe)}`)
    return rate((i) => flagd.resolveStringEvaluation(keys[i % nf]!, '', contexts[i % nc]!).variant, 100_000)
  }
  const provider = new QueueworksProvider({ url, serverKey, usage: { flushIntervalMs: 60_000 } })
  await OpenFeature.setProviderAndWait('bench', provider)
  try {
    const probe = provider.resolve('rich-0', '', contexts[0]!)
    if (!['blue', 'green', 'red'].includes(probe.value)) throw new Error(`the provider did not evaluate the rich flag: ${JSON.stringify(probe)}`)
    if (name === PROVIDER) return rate((i) => provider.resolve(keys[i % nf]!, '', contexts[i % nc]!).variant, 1_000_000)
    if (name === CLIENT) {
      const client = OpenFeature.getClient('bench')
      return await asyncRate((i) => client.getStringDetails(keys[i % nf]!, '', contexts[i % nc]!), 300_000)
    }
    throw new Error(`unknown case ${name}`)
  } finally {
    await OpenFeature.close()
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [name = PROVIDER, flags = '10', url = '', key = ''] = process.argv.slice(2)
  measure(name, Number(flags), url, key).then(
    (r) => {
      console.log(JSON.stringify(r))
      process.exit(0)
    },
    (err) => {
      console.error(err)
      process.exit(1)
    },
  )
}
