// In-process provider benchmark (docs/flags-in-process.md, "In-process provider"): `npm run
// bench:flags-provider [-- --providers 200 --rounds 10 --rate-rounds 3 --no-write]`.
// One flags API process (`src/main.ts api --service flags`) serves two projects of rich flags
// (lib/flags-rich.ts): FLAGS of them, the mixed workload of `bench:flags`' in-process engine figure
// (a semver rule with a segment, a regex + number rule, a 50/30/20 split, a 90/10 fallthrough),
// and RICH_FLAGS of the same kind (the workload this bench used before, kept as an extra line).
//  1. Evaluations per second in process, each case in a fresh process of its own
//     (lib/flags-provider-rates.ts), the same flags and the same contexts for all: the rule engine
//     alone over contexts normalised beforehand (the workload and code of `bench:flags`' mixed
//     figure), the provider's own evaluation (`provider.resolve`, what each OpenFeature call costs
//     beyond the SDK: context check, the engine reading the context in place, usage counting), and
//     the reference, flagd's in-process evaluator (@openfeature/flagd-core, the flags written as
//     JSON Logic); then a whole OpenFeature call (`client.getStringDetails`, SDK hooks and promise).
//     The cases run in interleaved rounds (RATE_ROUNDS), each process keeping its best window;
//     each figure is the best round per CPU second (on this shared machine other processes only
//     ever slow a measurement down), with the median of the rounds.
//  2. Change → every provider updated: PROVIDERS providers (each its own change stream) are
//     connected; a flag is changed ROUNDS times through the API and each provider's
//     ConfigurationChanged event is timed from the moment the change was sent. Target p99 ≤ 1 s.
// Uses REDIS_URL / MONGO_URL when set, else starts the embedded Redis and MongoDB engine. Appends
// its results to docs/benchmarks.md (replacing its own earlier section).
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import os from 'node:os'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { ProviderEvents } from '@openfeature/server-sdk'
import { QueueworksProvider } from '../../packages/openfeature-provider/src/index.ts'
import { findAccountByKey, setPlan } from '../../src/platform/accounts.ts'
import { loadConfig } from '../../src/platform/config.ts'
import { benchMongo, benchPort, benchRedis } from './lib/bench-env.ts'
import { createPlatform } from '../../src/platform/platform.ts'
import { ALL_INDEXES } from '../../src/collections.ts'
import { MIXED_CONTEXTS, type Rate } from './lib/engine-rates.ts'
import { FLAGS } from './lib/flags-setup.ts'
import { CLIENT, ENGINE, FLAGD, PROVIDER, WINDOWS } from './lib/flags-provider-rates.ts'
import { RICH_SEGMENT, richFlagDef } from './lib/flags-rich.ts'
import { writeBenchSection } from './lib/report.ts'
import { runBench } from './lib/run.ts'

const { values } = parseArgs({
  options: {
    providers: { type: 'string', default: '200' },
    rounds: { type: 'string', default: '10' },
    'rate-rounds': { type: 'string', default: '3' },
    'rich-flags': { type: 'string', default: '20' },
    'no-write': { type: 'boolean', default: false },
  },
})
const PROVIDERS = Number(values.providers)
const ROUNDS = Number(values.rounds)
const RATE_ROUNDS = Number(values['rate-rounds'])
const RICH_FLAGS = Number(values['rich-flags'])
const SECTION = '## In-process OpenFeature provider'
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const pct = (s: number[], p: number) => s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN
const m = (rate: number) => `${(rate / 1e6).toFixed(2)} M/s`

const PROVIDER_RATES = fileURLToPath(new URL('./lib/flags-provider-rates.ts', import.meta.url))

/** One case of lib/flags-provider-rates.ts in a process of its own. */
function providerRate(name: string, flags: number, url: string, serverKey: string): Rate {
  return JSON.parse(execFileSync(process.execPath, ['--import', 'tsx', PROVIDER_RATES, name, String(flags), url, serverKey], { encoding: 'utf8' }))
}

/** Rates of one case over the rounds: the best and the median per CPU second, and the best by the clock. */
interface Rates {
  best: number
  median: number
  wall: number
}

function summary(rs: Rate[]): Rates {
  const cpu = rs.map((r) => r.rate).sort((a, b) => a - b)
  return { best: cpu.at(-1)!, median: cpu[Math.floor(cpu.length / 2)]!, wall: Math.max(...rs.map((r) => r.wall)) }
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
  // One project per workload, each with its own server key: FLAGS rich flags, and RICH_FLAGS.
  const seed = async (projectId: string, flags: number) => {
    const P = `/api/v1/projects/${projectId}`
    await call(`${P}/segments`, RICH_SEGMENT, signup.api_key)
    for (let i = 0; i < flags; i++) await call(`${P}/flags`, richFlagDef(i), signup.api_key)
    return { P, serverKey: (await call(`${P}/environments/production/server-key/rotate`, undefined, signup.api_key)).server_key as string }
  }
  const { P, serverKey } = await seed(signup.project.id, FLAGS)
  const rich = await seed((await call('/api/v1/projects', { name: 'rich' }, signup.api_key)).id, RICH_FLAGS)

  // 1. Evaluations per second, mixed workload: interleaved rounds of one process per case.
  const load1 = os.loadavg()
  const runs: Record<string, Rate[]> = { engine: [], provider: [], flagd: [], client: [], engineRich: [], providerRich: [] }
  const loads: number[] = []
  for (let r = 0; r < RATE_ROUNDS; r++) {
    loads.push(os.loadavg()[0]!)
    runs.engine!.push(providerRate(ENGINE, FLAGS, base, serverKey))
    runs.provider!.push(providerRate(PROVIDER, FLAGS, base, serverKey))
    runs.flagd!.push(providerRate(FLAGD, FLAGS, base, serverKey))
    runs.engineRich!.push(providerRate(ENGINE, RICH_FLAGS, base, serverKey))
    runs.providerRich!.push(providerRate(PROVIDER, RICH_FLAGS, base, rich.serverKey))
    console.log(`round ${r + 1} (load ${loads.at(-1)!.toFixed(1)}): ${Object.entries(runs).map(([k, v]) => `${k} ${v.length ? m(v.at(-1)!.rate) : '-'}`).join(', ')}`)
  }
  runs.client!.push(providerRate(CLIENT, FLAGS, base, serverKey))
  const engine = summary(runs.engine!)
  const provider = summary(runs.provider!)
  const flagd = summary(runs.flagd!)
  const engineRich = summary(runs.engineRich!)
  const providerRich = summary(runs.providerRich!)
  const client = runs.client![0]!

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

  const both = (x: Rates) => `**${m(x.best)}** (median ${m(x.median)})`
  const report = [
    SECTION,
    '',
    `Measured ${new Date().toISOString().slice(0, 10)} on this ${os.cpus().length}-core machine (shared; load average ${load1[0]!.toFixed(1)} before, ${load2[0]!.toFixed(1)} after; ` +
      `${RATE_ROUNDS} rounds of rates at load ${loads.map((l) => l.toFixed(1)).join(', ')}). ` +
      `\`npm run bench:flags-provider\`: one flags API process; the rates evaluate the mixed workload of \`bench:flags\`' engine figure ` +
      `(${FLAGS} rich flags of \`scripts/bench/lib/flags-rich.ts\`, the same ${MIXED_CONTEXTS.toLocaleString('en-US')} contexts), each case in a fresh process keeping its best of ${WINDOWS} windows, in interleaved rounds; ` +
      'per CPU second, best round (median of the rounds in brackets).',
    '',
    '| what | result | target |',
    '|---|---|---|',
    `| rule engine alone, contexts normalised beforehand (the workload and code of \`bench:flags\`' mixed figure; by the clock: ${m(engine.wall)}) | ${both(engine)} | |`,
    `| provider evaluation \`provider.resolve\` (context check, engine reading the context in place, usage counting; by the clock: ${m(provider.wall)}) | ${both(provider)} | ≥ 8 M/s (judged on the median): ${provider.median >= 8e6 ? 'met' : 'not met'} |`,
    `| flagd-core \`resolveStringEvaluation\`, the same flags as JSON Logic (reference; by the clock: ${m(flagd.wall)}) | ${both(flagd)} | |`,
    `| provider / flagd-core (best rounds; medians) | **${(provider.best / flagd.best).toFixed(1)}×** (${(provider.median / flagd.median).toFixed(1)}×) | ≥ 5× (judged on the medians): ${provider.median >= 5 * flagd.median ? 'met' : 'not met'} |`,
    `| provider / engine alone (best rounds) | ${(provider.best / engine.best).toFixed(2)} | |`,
    `| ${RICH_FLAGS} rich flags instead of ${FLAGS}: engine alone / \`provider.resolve\` | ${both(engineRich)} / ${both(providerRich)} | |`,
    `| whole OpenFeature call \`client.getStringDetails\` (SDK hooks, promise; one round) | ${m(client.rate)} (by the clock: ${m(client.wall)}) | |`,
    `| change → every one of ${PROVIDERS} providers updated (${ROUNDS} rounds): p50 / p99 / max | ${ms(pct(lat, 50))} / **${ms(pct(lat, 99))}** / ${ms(lat.at(-1) ?? NaN)}${missed ? ` (${missed} not told within 5 s)` : ''} | p99 ≤ 1 s: ${pct(lat, 99) <= 1_000 && missed === 0 ? 'met' : 'not met'} |`,
    '',
  ].join('\n')
  console.log(report)
  if (!values['no-write']) writeBenchSection(report)
  await platform.close()
  for (const s of stops) await s()
})
