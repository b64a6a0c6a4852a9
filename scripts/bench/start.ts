// bench:start — how long from `node --import tsx src/main.ts start` (what `npm start` runs) to the first
// invoice served end to end, with an empty data folder and with one of ~100 MB (BENCH_START_MB;
// filled through the capture API with 1 MiB bodies, then stopped cleanly so it is a snapshot).
// The client asks as a user would: signup until it answers, then POST /invoice every 200 ms until
// a PDF comes back (counting the 503s it got meanwhile). Also prints when the "queueworks is ready"
// line appeared and the load average, and records the figures in docs/benchmarks.md. No warm-up:
// a start is cold by definition. An answer other than 503 or the PDF is counted, not fatal.
import { benchDir, benchPort } from './lib/bench-env.ts'
import { spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { readFileSync, rmSync } from 'node:fs'
import { loadavg } from 'node:os'
import { join } from 'node:path'
import { execSync } from 'node:child_process'
import { runBench } from './lib/run.ts'
import { writeBenchSection } from './lib/report.ts'

const FILL_MB = Number(process.env.BENCH_START_MB ?? 100)
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

interface Started {
  proc: ChildProcess
  output: () => string
  ports: number[]
  t0: number
}

async function start(dataDir: string, extraEnv: NodeJS.ProcessEnv = {}): Promise<Started> {
  const ports = [await benchPort(), await benchPort(), await benchPort()]
  const env: NodeJS.ProcessEnv = { ...process.env, INVOICE_PORT: String(ports[0]), FLAGS_PORT: String(ports[1]), WEBHOOKS_PORT: String(ports[2]), DATA_DIR: dataDir, ...extraEnv }
  for (const k of ['REDIS_URL', 'MONGO_URL', 'STRIPE_SECRET_KEY', 'STRIPE_API_BASE', 'LOG_LEVEL']) delete env[k]
  const t0 = performance.now()
  // What `npm start` runs (without npm itself, which adds its own start-up to every figure).
  const proc = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'start'], { env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] })
  let text = ''
  proc.stdout!.on('data', (b) => (text += b))
  proc.stderr!.on('data', (b) => (text += b))
  return { proc, output: () => text, ports, t0 }
}

async function stop(s: Started): Promise<void> {
  if (s.proc.exitCode !== null || s.proc.signalCode !== null) return
  const exited = new Promise((r) => s.proc.once('exit', r))
  process.kill(-s.proc.pid!, 'SIGTERM')
  await exited
  // Wait until the whole group is gone (the start writes its last snapshot and releases the data
  // folder first).
  for (;;) {
    try {
      process.kill(-s.proc.pid!, 0)
    } catch {
      return
    }
    await sleep(200)
  }
}

async function post(url: string, body: unknown, key?: string): Promise<Response | null> {
  try {
    return await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
      body: JSON.stringify(body),
    })
  } catch {
    return null // not listening yet
  }
}

/** Signup until the API answers, then ask for an invoice until one comes back. */
async function firstInvoice(s: Started): Promise<{ firstInvoiceS: number; readyLineS: number | null; refused: number; other: Record<string, number> }> {
  const base = `http://127.0.0.1:${s.ports[0]}/api/v1`
  let key: string | undefined
  let refused = 0
  // Answers other than 503 before the first invoice (by status): counted and reported, not fatal.
  const other: Record<string, number> = {}
  let readyLineAt: number | null = null
  for (;;) {
    if (readyLineAt === null && /queueworks is ready/.test(s.output())) readyLineAt = performance.now()
    if (s.proc.exitCode !== null) throw new Error(`start exited:\n${s.output()}`)
    if (performance.now() - s.t0 > 300_000) throw new Error(`no invoice within 300 s:\n${s.output()}`)
    if (!key) {
      const r = await post(`${base}/signup`, { email: `bench-${randomBytes(4).toString('hex')}@example.com` })
      if (r?.status === 200) key = ((await r.json()) as { api_key: string }).api_key
      else await sleep(200)
      continue
    }
    const r = await post(`${base}/invoice`, { items: [{ description: 'First light', quantity: 1, unit_price: 10 }] }, key)
    if (r?.status === 200 && r.headers.get('content-type') === 'application/pdf') {
      await r.arrayBuffer()
      const at = performance.now()
      // The ready line may trail the first invoice by a poll: give it a moment to be printed.
      for (let i = 0; i < 20 && readyLineAt === null; i++) {
        await sleep(100)
        if (/queueworks is ready/.test(s.output())) readyLineAt = performance.now()
      }
      return { firstInvoiceS: (at - s.t0) / 1000, readyLineS: readyLineAt === null ? null : (readyLineAt - s.t0) / 1000, refused, other }
    }
    if (r?.status === 503) refused++
    else if (r) other[String(r.status)] = (other[String(r.status)] ?? 0) + 1
    await r?.arrayBuffer().catch(() => undefined)
    await sleep(200)
  }
}

/** Fill a data folder to about FILL_MB through the capture API, then stop cleanly (a snapshot). */
async function fill(dataDir: string): Promise<string> {
  // Periodic snapshots while filling: the data is on disk before the stop, whatever the stop does.
  const s = await start(dataDir, { SNAPSHOT_INTERVAL_MS: '5000' })
  try {
    await firstInvoice(s)
    const api = `http://127.0.0.1:${s.ports[2]}/api/v1`
    const signup = await post(`${api}/signup`, { email: 'bench-fill@example.com' })
    const key = ((await signup!.json()) as { api_key: string }).api_key
    const ep = (await (await post(`${api}/endpoints`, {}, key))!.json()) as { url: string }
    const hook = new URL(ep.url)
    const body = Buffer.alloc(1024 * 1024)
    for (let i = 0; i < FILL_MB; i++) {
      // Random text: the snapshot cannot compress it away.
      body.write(randomBytes(768 * 1024).toString('base64'))
      const r = await fetch(`http://127.0.0.1:${s.ports[2]}${hook.pathname}`, { method: 'POST', body, headers: { 'content-type': 'text/plain' } })
      if (r.status >= 300) throw new Error(`capture ${i}: ${r.status} ${await r.text()}`)
      await r.arrayBuffer()
    }
    // Two more snapshots in place (the manifest's time changes): the second began after the last
    // capture was stored. Read from the folder: a quick snapshot is logged at debug level only.
    const manifestAt = () => {
      try {
        return (JSON.parse(readFileSync(join(dataDir, 'snapshot', 'manifest.json'), 'utf8')) as { created_at: string }).created_at
      } catch {
        return ''
      }
    }
    for (let seen = 0, last = manifestAt(); seen < 2; ) {
      await sleep(500)
      const now = manifestAt()
      if (now !== last) (seen++, (last = now))
    }
  } finally {
    await stop(s)
  }
  return execSync(`du -sh ${dataDir}`).toString().split('\t')[0]!
}

async function measure(label: string, dataDir: string): Promise<string> {
  const load = loadavg()[0]!.toFixed(2)
  const s = await start(dataDir)
  try {
    const r = await firstInvoice(s)
    const other = Object.entries(r.other).map(([k, n]) => `${k}: ${n}`).join(', ')
    const line = `| ${label} | ${r.firstInvoiceS.toFixed(1)} s | ${r.readyLineS === null ? '–' : `${r.readyLineS.toFixed(1)} s`} | ${r.refused}${other ? ` (other answers: ${other})` : ''} | ${load} |`
    console.log(line)
    return line
  } finally {
    await stop(s)
  }
}

runBench(async () => {
  const root = benchDir('start')
  try {
    const rows: string[] = []
    console.log('| data folder | first invoice served | "ready" line | 503s before it | load (1 min) at start |')
    if (process.env.BENCH_START_SKIP_EMPTY !== '1') rows.push(await measure('empty', join(root, 'empty')))
    const size = await fill(join(root, 'full'))
    rows.push(await measure(`${size} (${FILL_MB} captures of 1 MiB)`, join(root, 'full')))
    writeBenchSection(
      [
        '## Start to first invoice (bench:start)',
        '',
        `\`npm run bench:start\` (${new Date().toISOString().slice(0, 10)}, ${process.env.BENCH_NOTE ?? '2 shared cores'}): seconds from spawning`,
        '`node --import tsx src/main.ts start` (what `npm start` runs) to the first `POST /api/v1/invoice` answered with a PDF (the client polls every 200 ms),',
        'when the start printed "queueworks is ready", and how many requests were refused with 503 + Retry-After meanwhile.',
        '',
        '| data folder | first invoice served | "ready" line | 503s before it | load (1 min) at start |',
        '|---|---|---|---|---|',
        ...rows,
      ].join('\n'),
    )
  } finally {
    rmSync(root, { recursive: true, force: true })
  }
})
