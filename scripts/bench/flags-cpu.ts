// Server CPU per evaluate request, the steadier companion of bench:flags (Linux: reads /proc).
// Each server runs in its own process and autocannon in another (lib/harness.ts), so the CPU time a server
// process spends (user and system, all its threads) divided by the requests it answered is that
// server's cost per request, whatever else the machine is doing. Servers, all sent the same
// evaluate requests (50 connections):
//   reference   bare Koa answering a small JSON body (bench:flags now uses koa-floor as its reference);
//   koa-floor   Koa reading and parsing the body and writing a same-size answer itself: what any
//               Koa handler of this request shape costs at least;
//   evaluate    the flag service (embedded Redis and MongoDB engine unless REDIS_URL/MONGO_URL).
// Prints throughput, CPU µs per request and the ratio to the reference for each round.
//
//   npm run bench:flags-cpu [-- --duration 5 --rounds 3]
import { benchMongo, benchPort, benchRedis } from './lib/bench-env.ts'
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import readline from 'node:readline'
import { parseArgs } from 'node:util'
import Koa from 'koa'
import { fmt, load } from './lib/http-load.ts'
import type { EvaluateRequest } from './lib/flags-setup.ts'
import { runBench } from './lib/run.ts'

const SERVERS = ['reference', 'koa-floor', 'evaluate'] as const
type ServerName = (typeof SERVERS)[number]

async function serve(name: ServerName): Promise<{ url: string; requests: EvaluateRequest[] }> {
  if (name === 'evaluate') {
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
  process.once('SIGTERM', () => process.exit(0))
  const app = new Koa()
  if (name === 'reference') {
    app.use((ctx) => {
      ctx.body = { ok: true }
    })
  } else {
    const answer = JSON.stringify({ flags: Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`feature-${i}`, { value: 'true', reason: 'TARGETING_MATCH', rule_index: 2 }])) })
    app.use(async (ctx) => {
      const text = await new Promise<string>((resolve) => {
        const chunks: Buffer[] = []
        ctx.req.on('data', (c: Buffer) => chunks.push(c))
        ctx.req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')))
      })
      JSON.parse(text)
      ctx.respond = false
      ctx.res.writeHead(200, ['Content-Type', 'application/json; charset=utf-8', 'Content-Length', String(Buffer.byteLength(answer))])
      ctx.res.end(answer)
    })
  }
  const server = http.createServer(app.callback()).listen(await benchPort(), '127.0.0.1')
  await new Promise((r) => server.once('listening', r))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests: [] }
}

/** CPU time (µs) of a process so far, from /proc/<pid>/stat (clock ticks of 10 ms). */
function cpuMicros(pid: number): { user: number; system: number } {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
  return { user: Number(fields[11]) * 10_000, system: Number(fields[12]) * 10_000 }
}

async function main() {
  const { values } = parseArgs({ options: { duration: { type: 'string', default: '5' }, rounds: { type: 'string', default: '3' } } })
  const duration = Number(values.duration)
  const servers: Array<{ name: ServerName; pid: number; url: string; requests: EvaluateRequest[]; stop(): void }> = []
  try {
    for (const [i, name] of SERVERS.entries()) {
      // With BENCH_PORT_BASE each server process takes its ports from a range of its own.
      const env = process.env.BENCH_PORT_BASE ? { ...process.env, BENCH_PORT_BASE: String(Number(process.env.BENCH_PORT_BASE) + 10 * i) } : process.env
      const child = spawn(process.execPath, ['--import', 'tsx', import.meta.filename, 'serve', name], { env, stdio: ['ignore', 'pipe', 'inherit'] })
      const line = await new Promise<string>((resolve, reject) => {
        readline.createInterface({ input: child.stdout! }).once('line', resolve)
        child.once('exit', (code) => reject(new Error(`${name} server exited (${code})`)))
      })
      servers.push({ name, pid: child.pid!, ...JSON.parse(line), stop: () => child.kill('SIGTERM') })
    }
    // Every server gets the evaluate requests: the same load on the generator and the HTTP parser.
    const requests = servers.find((s) => s.name === 'evaluate')!.requests
    for (const s of servers) await load({ url: s.url, requests, connections: 50, duration: 2, workers: 1 })
    for (let round = 1; round <= Number(values.rounds); round++) {
      let reference = 0
      for (const s of servers) {
        const before = cpuMicros(s.pid)
        const r = await load({ url: s.url, requests, connections: 50, duration, workers: 1 })
        const after = cpuMicros(s.pid)
        const n = r.rps * duration
        const user = (after.user - before.user) / n
        const system = (after.system - before.system) / n
        if (s.name === 'reference') reference = r.rps
        console.log(
          `round ${round} ${s.name.padEnd(9)} ${fmt(r.rps, 0).padStart(7)} req/s (${fmt(r.rps / reference, 2)} of the reference)  ` +
            `CPU per request ${fmt(user + system, 1)} µs (user ${fmt(user, 1)}, system ${fmt(system, 1)})  p99 ${r.p99} ms  non-2xx ${r.non2xx}`,
        )
      }
    }
  } finally {
    for (const s of servers) s.stop()
  }
}

if (process.argv[2] === 'serve') {
  serve(process.argv[3] as ServerName).then(
    (s) => process.stdout.write(`${JSON.stringify(s)}\n`),
    (err) => {
      console.error(err)
      process.exit(1)
    },
  )
} else {
  runBench(main)
}
