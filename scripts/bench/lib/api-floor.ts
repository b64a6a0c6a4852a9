// Runs the invoice API's floor (api-floor.mjs: bare Koa, one MongoDB update, one Redis push, the PDF
// back by pub/sub) beside the measured system and returns its API process's CPU per request over
// sequential requests, measured like the service's (/proc, lib/proc-cpu.ts).
import { spawn, type ChildProcess } from 'node:child_process'
import { writeFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { treeCpuMs } from './proc-cpu.ts'

export interface FloorResult {
  /** CPU ms of the floor's API process per request. */
  cpuMs: number
  p50Ms: number
  requests: number
}

const SCRIPT = 'scripts/bench/lib/api-floor.mjs'

function start(mode: 'api' | 'worker', env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, [SCRIPT, mode], { env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'inherit'] })
}

/** `pdf`: the answer the floor's worker publishes (one of the service's own, same size); `body`: the request sent. */
export async function measureApiFloor(opts: { redisUrl: string; mongoUrl: string; db: string; prefix: string; pdf: Buffer; body: string; n: number }): Promise<FloorResult> {
  const pdfPath = join(tmpdir(), `qw-floor-${process.pid}.pdf`)
  writeFileSync(pdfPath, opts.pdf)
  const env = { REDIS_URL: opts.redisUrl, MONGO_URL: opts.mongoUrl, MONGO_DB: opts.db, QW_FLOOR_PREFIX: opts.prefix, QW_FLOOR_PDF: pdfPath, QW_FLOOR_PORT: '0' }
  const worker = start('worker', env)
  const api = start('api', env)
  try {
    const first = await createInterface({ input: api.stdout! })[Symbol.asyncIterator]().next()
    const url = /^listening (\S+)/.exec(String(first.value ?? ''))?.[1]
    if (!url) throw new Error('the API floor did not start')
    const one = async () => {
      const t = performance.now()
      const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: opts.body })
      const buf = Buffer.from(await r.arrayBuffer())
      if (r.status !== 200 || buf.length !== opts.pdf.length) throw new Error(`the API floor answered ${r.status}, ${buf.length} bytes`)
      return performance.now() - t
    }
    for (let i = 0; i < 200; i++) await one() // warm-up: JIT, connections
    const cpu0 = treeCpuMs(api.pid!)
    const latencies: number[] = []
    for (let i = 0; i < opts.n; i++) latencies.push(await one())
    const cpuMs = (treeCpuMs(api.pid!) - cpu0) / opts.n
    latencies.sort((a, b) => a - b)
    return { cpuMs, p50Ms: latencies[Math.floor((latencies.length - 1) / 2)]!, requests: opts.n }
  } finally {
    for (const c of [api, worker]) {
      c.stdin!.end()
      if (c.exitCode === null) await new Promise((r) => c.once('exit', r))
    }
    rmSync(pdfPath, { force: true })
  }
}
