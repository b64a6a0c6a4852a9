// In-process provider benchmark (docs/flags.md, "In-process provider"): `npm run
// bench:flags-provider [-- --providers 200 --rounds 10 --no-write]`.
// One flags API process (`src/main.ts api --service flags`) serves a project of rich flags
// (lib/flags-rich.ts: the mixed workload of the in-process engine figures: a semver rule with a
// segment, a regex + number rule, a 50/30/20 split, a 90/10 fallthrough).
//  1. Evaluations per second in this process, for the mixed workload: the rule engine alone over
//     contexts normalised beforehand (the figure `bench:flags` reports), the provider's own
//     evaluation (`provider.resolve`, what each OpenFeature call costs beyond the SDK: context
//     check, the engine reading the context in place, usage counting), and a whole OpenFeature call
//     (`client.getStringDetails`, the SDK's hooks and promise included).
//     The reference, measured in the same run over the same flags and contexts: flagd's in-process
//     evaluator (@openfeature/flagd-core), the flags written as flagd JSON Logic (flagdConfig).
//  2. Change → every provider updated: PROVIDERS providers (each its own change stream) are
//     connected; a flag is changed ROUNDS times through the API and each provider's
//     ConfigurationChanged event is timed from the moment the change was sent. Target p99 ≤ 1 s.
// Uses REDIS_URL / MONGO_URL when set, else starts the embedded Redis and MongoDB engine. Appends
// its results to docs/benchmarks.md (replacing its own earlier section).
import { spawn, type ChildProcess } from 'node:child_process'
import os from 'node:os'
import { parseArgs } from 'node:util'
import { OpenFeature, ProviderEvents } from '@openfeature/server-sdk'
import { FlagdCore } from '@openfeature/flagd-core'
import { QueueworksProvider } from '@queueworks/openfeature-provider'
import { findAccountByKey, setPlan } from '../../src/platform/accounts.ts'
import { loadConfig } from '../../src/platform/config.ts'
import { benchMongo, benchPort, benchRedis } from './lib/bench-env.ts'
import { createPlatform } from '../../src/platform/platform.ts'
import { ALL_INDEXES } from '../../src/collections.ts'
import { compileFlag, normalizeContext } from '../../src/flags/engine/rules.ts'
import { RICH_SEGMENT, richContext, richFlagDef } from './lib/flags-rich.ts'
import { writeBenchSection } from './lib/report.ts'
import { runBench } from './lib/run.ts'

const { values } = parseArgs({
  options: { providers: { type: 'string', default: '200' }, rounds: { type: 'string', default: '10' }, flags: { type: 'string', default: '20' }, 'no-write': { type: 'boolean', default: false } },
})
const PROVIDERS = Number(values.providers)
const ROUNDS = Number(values.rounds)
const FLAGS = Number(values.flags)
const SECTION = '## In-process OpenFeature provider'
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const pct = (s: number[], p: number) => s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN
const m = (rate: number) => `${(rate / 1e6).toFixed(2)} M/s`

/**
 * The rich flags (lib/flags-rich.ts) as flagd flags: the same rules, segment folded in, the regex
 * `^qa-` as flagd's starts_with (it has no regular expressions), splits as `fractional` over user_id.
 */
function flagdConfig(n: number): string {
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

/** Wall-clock rates of the last `rate` calls, by what was measured (printed beside the CPU rates). */
const wall: number[] = []

/**
 * Calls per second of this process's CPU time (process.cpuUsage: per core-second, which the
 * shared machine's load decides far less than the wall clock) of `f(i)`, after a JIT warm-up.
 */
function rate(f: (i: number) => unknown, n = 3_000_000): number {
  let sink = 0
  for (let i = 0; i < 200_000; i++) if (f(i)) sink++
  const cpu0 = process.cpuUsage()
  const t0 = performance.now()
  for (let i = 0; i < n; i++) if (f(i)) sink++
  const s = (performance.now() - t0) / 1000
  const cpu = process.cpuUsage(cpu0)
  if (sink < 0) console.log(sink)
  wall.push(n / s)
  return n / ((cpu.user + cpu.system) / 1e6)
}

async function asyncRate(f: (i: number) => Promise<unknown>, n = 300_000): Promise<number> {
  for (let i = 0; i < 20_000; i++) await f(i)
  const t0 = performance.now()
  for (let i = 0; i < n; i++) await f(i)
  return n / ((performance.now() - t0) / 1000)
}

async function stopChild(child: ChildProcess) {
  if (child.exitCode !== null) return
  child.kill('SIGTERM')
  await new Promise((r) => child.once('exit', r))
}

runBench(async () => {
  const stops: Array<() => Promise<void>> = []
  const redisUrl: string = process.env.REDIS_URL ?? (await benchRedis().then((r) => (stops.push(() => r.child.stop()), r.url as string)))
  const mongoUrl: string = process.env.MONGO_URL ?? (await benchMongo().then((m) => (stops.push(() => m.child.stop()), m.url as string)))
  const env = { LOG_LEVEL: 'silent', MONGO_DB: `bench_fp_${Date.now()}`, QUEUE_PREFIX: `bfp${Date.now()}`, REDIS_URL: redisUrl, MONGO_URL: mongoUrl }
  const platform = await createPlatform({ config: loadConfig({ ...process.env, ...env }), redisUrl, mongoUrl, indexes: ALL_INDEXES })
  const port = await benchPort()
  const api = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'api', '--service', 'flags'], {
    env: { ...process.env, ...env, FLAGS_PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', 'ignore', 'inherit'],
  })
  stops.unshift(() => stopChild(api))
  const base = `http://127.0.0.1:${port}`
  for (let i = 0; !(await fetch(`${base}/healthz`).catch(() => null))?.status; i++) {
    if (i > 300) throw new Error('the flags API did not start')
    await sleep(100)
  }
  const call = async (path: string, body: unknown, key?: string, method = 'POST') => {
    const r = await fetch(`${base}${path}`, { method, headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) }, body: body === undefined ? undefined : JSON.stringify(body) })
    if (r.status >= 300) throw new Error(`${path}: ${r.status} ${await r.text()}`)
    return r.json() as Promise<any>
  }
  const signup = await call('/api/v1/signup', { email: `bench-provider-${Date.now()}@example.com` })
  await setPlan(platform.db, (await findAccountByKey(platform.db, 'flags', signup.api_key))!._id, 'business')
  const P = `/api/v1/projects/${signup.project.id}`
  await call(`${P}/segments`, RICH_SEGMENT, signup.api_key)
  for (let i = 0; i < FLAGS; i++) await call(`${P}/flags`, richFlagDef(i), signup.api_key)
  const serverKey = (await call(`${P}/environments/production/server-key/rotate`, undefined, signup.api_key)).server_key as string

  // 1. Evaluations per second, mixed workload.
  const load1 = os.loadavg()
  const contexts = Array.from({ length: 4_096 }, (_, i) => richContext(i))
  const keys = Array.from({ length: FLAGS }, (_, i) => `rich-${i}`)
  const engineFlags = keys.map((_, i) => compileFlag(richFlagDef(i), new Map([[RICH_SEGMENT.name, RICH_SEGMENT.conditions]])))
  const normalised = contexts.map((c) => normalizeContext(c))
  const engineRate = rate((i) => engineFlags[i % FLAGS]!.evaluate(normalised[i & 4095]!).variant)
  const provider = new QueueworksProvider({ url: base, serverKey, usage: { flushIntervalMs: 60_000 } })
  await OpenFeature.setProviderAndWait('bench', provider)
  const providerRate = rate((i) => provider.resolve(keys[i % FLAGS]!, '', contexts[i & 4095]!).variant)
  const flagd = new FlagdCore()
  flagd.setConfigurations(flagdConfig(FLAGS))
  const probe = flagd.resolveStringEvaluation('rich-0', '', contexts[0]!)
  if (probe.reason === 'ERROR' || !['blue', 'green', 'red'].includes(probe.value)) throw new Error(`flagd-core did not evaluate the rich flag: ${JSON.stringify(probe)}`)
  const flagdRate = rate((i) => flagd.resolveStringEvaluation(keys[i % FLAGS]!, '', contexts[i & 4095]!).variant, 500_000)
  const client = OpenFeature.getClient('bench')
  const clientRate = await asyncRate((i) => client.getStringDetails(keys[i % FLAGS]!, '', contexts[i & 4095]!))
  await OpenFeature.close()

  // 2. Change → every provider updated.
  const providers = Array.from({ length: PROVIDERS }, () => new QueueworksProvider({ url: base, serverKey, usage: false }))
  for (let i = 0; i < PROVIDERS; i += 50) await Promise.all(providers.slice(i, i + 50).map((p) => p.initialize()))
  for (let i = 0; ; i++) {
    if (providers.every((p) => p.syncStatus().streaming)) break
    if (i > 600) throw new Error(`${providers.filter((p) => !p.syncStatus().streaming).length} providers never connected their stream`)
    await sleep(50)
  }
  const lat: number[] = []
  let missed = 0
  for (let n = 1; n <= ROUNDS; n++) {
    const seen = new Array<number>(PROVIDERS).fill(NaN)
    const handlers = providers.map((p, i) => {
      const h = () => void (seen[i] = performance.now())
      p.events.addHandler(ProviderEvents.ConfigurationChanged, h)
      return h
    })
    const t0 = performance.now()
    await call(`${P}/flags/rich-0`, { default_value: `v${n}` }, signup.api_key, 'PUT')
    for (let i = 0; i < 200 && seen.some(Number.isNaN); i++) await sleep(25)
    providers.forEach((p, i) => p.events.removeHandler(ProviderEvents.ConfigurationChanged, handlers[i]!))
    for (const s of seen) Number.isNaN(s) ? missed++ : lat.push(s - t0)
    await sleep(300)
  }
  for (const p of providers) await p.onClose()
  const load2 = os.loadavg()
  lat.sort((a, b) => a - b)
  const ms = (x: number) => `${x.toFixed(0)} ms`

  const report = [
    SECTION,
    '',
    `Measured ${new Date().toISOString().slice(0, 10)} on this ${os.cpus().length}-core machine (shared; load average ${load1[0]!.toFixed(1)} before, ${load2[0]!.toFixed(1)} after). ` +
      `\`npm run bench:flags-provider\`: one flags API process, a project of ${FLAGS} rich flags (the mixed workload of \`scripts/bench/lib/flags-rich.ts\`).`,
    '',
    '| what | result | target |',
    '|---|---|---|',
    `| rule engine alone, contexts normalised beforehand (mixed), per CPU second (by the clock: ${m(wall[0]!)}) | ${m(engineRate)} | |`,
    `| provider evaluation \`provider.resolve\` (context check, engine reading the context in place, usage counting), per CPU second (by the clock: ${m(wall[1]!)}) | **${m(providerRate)}** | ≥ 8 M/s: ${providerRate >= 8e6 ? 'met' : 'not met'} |`,
    `| flagd-core \`resolveStringEvaluation\`, the same flags as JSON Logic (reference), per CPU second (by the clock: ${m(wall[2]!)}) | ${m(flagdRate)} | |`,
    `| provider / flagd-core | **${(providerRate / flagdRate).toFixed(1)}×** | ≥ 5×: ${providerRate >= 5 * flagdRate ? 'met' : 'not met'} |`,
    `| whole OpenFeature call \`client.getStringDetails\` (SDK hooks, promise) | ${m(clientRate)} | |`,
    `| change → every one of ${PROVIDERS} providers updated (${ROUNDS} rounds): p50 / p99 / max | ${ms(pct(lat, 50))} / **${ms(pct(lat, 99))}** / ${ms(lat.at(-1) ?? NaN)}${missed ? ` (${missed} not told within 5 s)` : ''} | p99 ≤ 1 s: ${pct(lat, 99) <= 1_000 && missed === 0 ? 'met' : 'not met'} |`,
    '',
  ].join('\n')
  console.log(report)
  if (!values['no-write']) writeBenchSection(report)
  await platform.close()
  for (const s of stops) await s()
})
