// The committed reverse-proxy config, run for real: Debian's Caddy with deploy/Caddyfile (adapted to
// JSON, only its upstreams and listen addresses swapped for 127.0.0.x) in front of two invoice API
// processes started with TRUST_PROXY=true, as docker-compose.yml runs them.
import assert from 'node:assert/strict'
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort } from './helpers/ports.ts'
import { DEMO_RATE_MESSAGE } from '../src/invoice/invoice-routes.ts'
import { QueueName } from './helpers/queue-names.ts'
import { startSystem, waitForExit, type TestSystem } from './helpers/system.ts'

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

async function until<T>(what: string, fn: () => Promise<T | undefined | false>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const v = await fn().catch(() => undefined)
    if (v) return v
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await sleep(100)
  }
}

/** One HTTP request from a chosen local address (127.0.0.2 is another client on the same host). */
function send(url: string, opts: { method?: string; json?: unknown; from?: string; headers?: Record<string, string> } = {}): Promise<{ status: number; json: any }> {
  const body = opts.json === undefined ? undefined : JSON.stringify(opts.json)
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: opts.method ?? (body ? 'POST' : 'GET'),
        localAddress: opts.from ?? '127.0.0.1',
        agent: false,
        headers: { ...(body ? { 'content-type': 'application/json' } : {}), ...opts.headers },
      },
      (res) => {
        const chunks: Buffer[] = []
        res.on('data', (c) => chunks.push(c))
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8')
          let json: any
          try {
            json = JSON.parse(text)
          } catch {
            json = text
          }
          resolve({ status: res.statusCode!, json })
        })
      },
    )
    req.on('error', reject)
    req.end(body)
  })
}

/** How many requests a process answered on a route, from its own /metrics. */
async function answered(root: string, route: string): Promise<number> {
  const text = await (await fetch(`${root}/metrics`)).text()
  let n = 0
  for (const line of text.split('\n')) {
    if (line.startsWith('http_request_duration_seconds_count{') && line.includes(`route="${route}"`)) n += Number(line.split(' ').pop())
  }
  return n
}

describe('ops: Caddy (deploy/Caddyfile) in front of two API replicas', () => {
  let sys: TestSystem
  const apis: ChildProcess[] = []
  let caddy: ChildProcess | undefined
  let dir: string
  let proxy: string
  const roots: string[] = []

  before(async function () {
    this.timeout(120_000)
    // Renders happen here (in-process workers on the same queues); the APIs are separate processes.
    sys = await startSystem({ services: [], workers: { queues: [QueueName.InvoiceRender] } })
    for (let i = 0; i < 2; i++) {
      const port = await freePort()
      const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'api', '--service', 'invoice'], {
        env: { ...process.env, ...sys.env, INVOICE_PORT: String(port), HOST: '127.0.0.1', TRUST_PROXY: 'true' },
        stdio: ['ignore', 'ignore', 'pipe'],
      })
      child.stderr!.on('data', (b) => process.env.DEBUG_WORKERS && process.stderr.write(b))
      apis.push(child)
      roots.push(`http://127.0.0.1:${port}`)
    }
    // The committed config, adapted by Caddy itself; keep the invoice site, point it at our two
    // processes (static upstreams instead of Docker DNS) and listen on 127.0.0.1 and 127.0.0.2 only.
    const config = JSON.parse(execFileSync('caddy', ['adapt', '--config', 'deploy/Caddyfile'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }))
    const servers = config.apps.http.servers as Record<string, any>
    const [name, invoiceSite] = Object.entries(servers).find(([, s]) => s.listen[0] === ':3001')!
    const handler = invoiceSite.routes[0].handle.find((h: any) => h.handler === 'reverse_proxy')
    assert.equal(handler.dynamic_upstreams.name, 'invoice')
    delete handler.dynamic_upstreams
    handler.upstreams = roots.map((r) => ({ dial: r.replace('http://', '') }))
    const port = await freePort()
    invoiceSite.listen = [`127.0.0.1:${port}`, `127.0.0.2:${port}`]
    config.apps.http.servers = { [name]: invoiceSite }
    dir = mkdtempSync(join(tmpdir(), 'qw-caddy-'))
    writeFileSync(join(dir, 'caddy.json'), JSON.stringify(config))
    caddy = spawn('caddy', ['run', '--config', join(dir, 'caddy.json')], {
      env: { ...process.env, HOME: dir, XDG_DATA_HOME: dir, XDG_CONFIG_HOME: dir },
      stdio: ['ignore', 'ignore', 'pipe'],
    })
    caddy.stderr!.on('data', (b) => process.env.DEBUG_WORKERS && process.stderr.write(b))
    proxy = `http://127.0.0.1:${port}`
    for (const root of roots) await until(`api ${root}`, async () => (await fetch(`${root}/healthz`)).ok)
    await until('proxy', async () => (await send(`${proxy}/healthz`)).status === 200)
  })

  after(async () => {
    const running = [...apis, caddy].filter((c): c is ChildProcess => !!c && c.exitCode === null && c.signalCode === null)
    for (const c of running) c.kill('SIGKILL')
    await Promise.all(running.map(waitForExit))
    await sys?.stop()
    if (dir) rmSync(dir, { recursive: true, force: true })
  })

  it('spreads requests over both replicas', async () => {
    for (let i = 0; i < 6; i++) {
      const r = await send(`${proxy}/api/v1/signup`, { json: { email: `proxy${i}@example.com` } })
      assert.equal(r.status, 200, JSON.stringify(r.json))
      assert.match(r.json.api_key, /^dm_/)
    }
    const counts = await Promise.all(roots.map((r) => answered(r, '/api/v1/signup')))
    assert.equal(counts[0]! + counts[1]!, 6)
    assert.ok(counts.every((c) => c > 0), `both replicas answered: ${counts}`)
  })

  it('the demo limit is per client address behind it, across replicas, and a forged X-Forwarded-For does not reset it', async function () {
    this.timeout(120_000)
    const demo = { items: [{ description: 'Proxy demo', quantity: 1, unit_price: 1 }] }
    for (let i = 0; i < 5; i++) {
      const r = await send(`${proxy}/api/v1/demo-invoice`, { json: demo, from: '127.0.0.1' })
      assert.equal(r.status, 200, `request ${i + 1}: ${JSON.stringify(r.json)}`)
    }
    const sixth = await send(`${proxy}/api/v1/demo-invoice`, { json: demo, from: '127.0.0.1' })
    assert.equal(sixth.status, 429)
    assert.equal(sixth.json.error, DEMO_RATE_MESSAGE)
    // The same client claiming to be someone else: Caddy replaces the header with the real address.
    const forged = await send(`${proxy}/api/v1/demo-invoice`, { json: demo, from: '127.0.0.1', headers: { 'x-forwarded-for': '203.0.113.9' } })
    assert.equal(forged.status, 429)
    // Another client (another source address) has its own budget.
    const other = await send(`${proxy}/api/v1/demo-invoice`, { json: demo, from: '127.0.0.2' })
    assert.equal(other.status, 200, JSON.stringify(other.json))
    const counts = await Promise.all(roots.map((r) => answered(r, '/api/v1/demo-invoice')))
    assert.ok(counts.every((c) => c > 0), `both replicas answered demo requests: ${counts}`)
  })
})
