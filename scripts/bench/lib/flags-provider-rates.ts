// bench:flags-provider's evaluation rates, one case per process (as lib/engine-rates.ts takes the
// engine's): run as `tsx scripts/bench/lib/flags-provider-rates.ts <case> <flags> [url serverKey]`
// it prints `{"rate": …, "wall": …}`. The cases evaluate the mixed workload of the engine figure
// (lib/flags-rich.ts: `flags` rich flags, the same 4,096 contexts, flag i % flags with context
// i % 4096):
//   provider  QueueworksProvider.resolve over the caller's contexts as given (connected to the
//             service at `url`, its project holding the same flags)
//   client    a whole OpenFeature call, `client.getStringDetails` awaited (SDK hooks, promise)
//   flagd     @openfeature/flagd-core's in-process evaluator over the same flags as JSON Logic
// The engine itself is engine-rates.ts's `mixed` case. A fresh process per case keeps the JIT
// state of one case (call sites made polymorphic by other code) out of another's figure; in one
// process, the figure measured later was up to 2× lower for the same code.
import { fileURLToPath } from 'node:url'
import { OpenFeature } from '@openfeature/server-sdk'
import { FlagdCore } from '@openfeature/flagd-core'
import { QueueworksProvider } from '@queueworks/openfeature-provider'
import { MIXED_CONTEXTS, type Rate } from './engine-rates.ts'
import { richContext } from './flags-rich.ts'

/** Calls per CPU second (process.cpuUsage: this process's core-seconds) and per second by the clock, after a JIT warm-up. */
function rate(f: (i: number) => unknown, n: number): Rate {
  let sink = 0
  for (let i = 0; i < 200_000; i++) if (f(i)) sink++
  const cpu0 = process.cpuUsage()
  const t0 = performance.now()
  for (let i = 0; i < n; i++) if (f(i)) sink++
  const s = (performance.now() - t0) / 1000
  const cpu = process.cpuUsage(cpu0)
  if (sink < 0) console.log(sink)
  return { rate: n / ((cpu.user + cpu.system) / 1e6), wall: n / s }
}

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

export const PROVIDER = 'provider'
export const CLIENT = 'client'
export const FLAGD = 'flagd'

async function measure(name: string, nf: number, url: string, serverKey: string): Promise<Rate> {
  const keys = Array.from({ length: nf }, (_, i) => `rich-${i}`)
  const contexts = Array.from({ length: MIXED_CONTEXTS }, (_, i) => richContext(i))
  const nc = contexts.length
  if (name === FLAGD) {
    const flagd = new FlagdCore()
    flagd.setConfigurations(flagdConfig(nf))
    const probe = flagd.resolveStringEvaluation('rich-0', '', contexts[0]!)
    if (probe.reason === 'ERROR' || !['blue', 'green', 'red'].includes(probe.value)) throw new Error(`flagd-core did not evaluate the rich flag: ${JSON.stringify(probe)}`)
    return rate((i) => flagd.resolveStringEvaluation(keys[i % nf]!, '', contexts[i % nc]!).variant, 500_000)
  }
  const provider = new QueueworksProvider({ url, serverKey, usage: { flushIntervalMs: 60_000 } })
  await OpenFeature.setProviderAndWait('bench', provider)
  try {
    const probe = provider.resolve('rich-0', '', contexts[0]!)
    if (!['blue', 'green', 'red'].includes(probe.value)) throw new Error(`the provider did not evaluate the rich flag: ${JSON.stringify(probe)}`)
    if (name === PROVIDER) return rate((i) => provider.resolve(keys[i % nf]!, '', contexts[i % nc]!).variant, 3_000_000)
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
