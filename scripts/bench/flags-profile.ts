// CPU profile of POST /api/v1/evaluate, per process (docs/benchmarks.md, "Feature flags: where an
// evaluate request's CPU goes"). The flags service runs in this process, as in bench:flags, with
// the same data (lib/flags-setup.ts, lib/flags-rich.ts); autocannon runs in its own process
// (lib/harness.ts), so the profile of this process is the service's alone. For each workload
// (simple, mixed): a warm-up run, then V8's profiler (node:inspector) runs only while the load
// does; the profile is written to OUT_DIR/<workload>.cpuprofile and summarised by self time per
// module and per function, in µs per request (cpuprofile-summary.ts).
//
//   npx tsx scripts/bench/flags-profile.ts [--duration 10] [--out .tmp/flags-profile]
//
// Line numbers are those of the code tsx runs (esbuild's output), which keeps each file's names.
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import { Session } from 'node:inspector/promises'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { listen } from '../../src/serve.ts'
import { ALL_INDEXES } from '../../src/collections.ts'
import { flagsService } from '../../src/flags/service.ts'
import { loadConfig } from '../../src/platform/config.ts'
import { createPlatform } from '../../src/platform/platform.ts'
import { benchMongo, benchPort, benchRedis } from './lib/bench-env.ts'
import { closeLoadGenerator, loadAverage, loadFailures, runLoad, type LoadTarget } from './lib/harness.ts'
import { FLAGS, PROJECTS, seedFlags } from './lib/flags-setup.ts'
import { seedRichFlags } from './lib/flags-rich.ts'
import { runBench } from './lib/run.ts'

const { values } = parseArgs({ options: { duration: { type: 'string', default: '10' }, out: { type: 'string', default: '.tmp/flags-profile' } } })
const DURATION = Number(values.duration)
const OUT = path.resolve(values.out!)

/** One load run in the generator's process: requests per second, p99, failed requests. */
async function load(target: LoadTarget, connections: number, duration: number) {
  const r = await runLoad(target, { connections, duration })
  return { rps: r.ok / r.seconds, p99: r.p99, failed: loadFailures(r).failed }
}

runBench(async () => {
  const stops: Array<() => Promise<void>> = []
  const redisUrl = process.env.REDIS_URL ?? (await benchRedis().then((r) => (stops.push(() => r.child.stop()), r.url)))
  const mongoUrl = process.env.MONGO_URL ?? (await benchMongo().then((m) => (stops.push(() => m.child.stop()), m.url)))
  try {
    const tag = `bench_flags_profile_${Date.now()}`
    const config = loadConfig({ ...process.env, LOG_LEVEL: 'silent', MONGO_DB: tag, QUEUE_PREFIX: tag })
    const platform = await createPlatform({ config, redisUrl: redisUrl!, mongoUrl: mongoUrl!, indexes: ALL_INDEXES })
    const server = await listen(platform, flagsService, await benchPort())
    const root = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    const workloads = { simple: await seedFlags(platform, `${root}/api/v1`), mixed: await seedRichFlags(platform, `${root}/api/v1`, PROJECTS, FLAGS) }
    fs.mkdirSync(OUT, { recursive: true })
    const session = new Session()
    session.connect()
    await session.post('Profiler.enable')
    for (const [name, requests] of Object.entries(workloads)) {
      await load({ url: root, requests }, 50, 3)
      const before = loadAverage()
      await session.post('Profiler.start')
      const r = await load({ url: root, requests }, 50, DURATION)
      const { profile } = await session.post('Profiler.stop')
      const file = path.join(OUT, `${name}.cpuprofile`)
      fs.writeFileSync(file, JSON.stringify(profile))
      const answered = Math.round(r.rps * DURATION)
      console.log(`\n== ${name}: ${Math.round(r.rps)} req/s, p99 ${r.p99} ms, failed ${r.failed}, load average ${before.toFixed(1)} before`)
      console.log(execFileSync(process.execPath, ['--import', 'tsx', path.join(import.meta.dirname, 'cpuprofile-summary.ts'), file, '--requests', String(answered)], { encoding: 'utf8' }))
    }
    session.disconnect()
    await closeLoadGenerator()
    await new Promise<void>((r) => {
      server.close(() => r())
      server.closeAllConnections()
    })
    await platform.close()
  } finally {
    for (const s of stops) await s()
  }
})
