// SIGTERM to an api process just after a burst of requests, each on its own connection: every
// request the server had received before the signal gets its answer (none is reset), new
// connections are refused, and the process exits 0.
import assert from 'node:assert/strict'
import { spawn, type ChildProcess } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { request } from 'node:http'
import { freePort } from './helpers/ports.ts'
import { startSystem, waitForExit, type TestSystem } from './helpers/system.ts'
import { get } from './helpers/http.ts'

const BURST = 25

async function until(what: string, fn: () => Promise<boolean>, timeoutMs = 60_000, everyMs = 100): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await fn().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, everyMs))
  }
}

/** Rows of the kernel's IPv4 TCP table: ports, state (hex), and bytes sent but not yet acknowledged. */
function tcpTable(): Array<{ local: number; remote: number; unacked: number }> {
  return readFileSync('/proc/net/tcp', 'utf8')
    .split('\n')
    .slice(1)
    .filter((l) => l.trim())
    .map((line) => {
      const f = line.trim().split(/\s+/)
      const port = (addr: string) => parseInt(addr.split(':')[1]!, 16)
      return { local: port(f[1]!), remote: port(f[2]!), unacked: parseInt(f[4]!.split(':')[0]!, 16) }
    })
}

/**
 * The server has received each of these connections' requests: its kernel holds the connection
 * (handshake complete, accepted or waiting to be) and has acknowledged every byte the client sent.
 * On a loaded machine that can lag well behind the client's 'connect' and write callbacks.
 */
function receivedByServer(serverPort: number, clientPorts: number[]): boolean {
  const rows = tcpTable()
  return clientPorts.every((c) => {
    const serverSide = rows.some((r) => r.local === serverPort && r.remote === c)
    const client = rows.find((r) => r.local === c && r.remote === serverPort)
    return serverSide && (!client || client.unacked === 0)
  })
}

/**
 * POST on a connection of its own. `sent` resolves with the client's port once the whole request
 * has been handed to the kernel; `answer` with the status or the error.
 */
function postAlone(base: string, path: string, body: unknown): { sent: Promise<number>; answer: Promise<number | string> } {
  let sent!: (port: number) => void
  let localPort = 0
  const sentP = new Promise<number>((r) => (sent = r))
  const answer = new Promise<number | string>((resolve) => {
    const payload = JSON.stringify(body)
    const req = request(`${base}${path}`, { method: 'POST', agent: false, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } }, (res) => {
      res.resume()
      res.on('end', () => resolve(res.statusCode!))
      res.on('error', (e) => resolve(String((e as NodeJS.ErrnoException).code ?? e)))
    })
    req.on('error', (e) => {
      sent(localPort)
      resolve(String((e as NodeJS.ErrnoException).code ?? e))
    })
    const connected = new Promise<void>((r) => req.once('socket', (s) => s.once('connect', () => ((localPort = s.localPort!), r()))))
    const written = new Promise<void>((r) => req.end(payload, () => r()))
    void Promise.all([connected, written]).then(() => sent(localPort))
  })
  return { sent: sentP, answer }
}

describe('ops: SIGTERM with a burst of requests on fresh connections', function () {
  this.timeout(180_000)
  let sys: TestSystem
  let api: ChildProcess | undefined
  before(async () => {
    sys = await startSystem({ services: [], workers: false })
  })
  after(async () => {
    if (api && api.exitCode === null && api.signalCode === null) api.kill('SIGKILL')
    await sys?.stop()
  })

  for (const round of [1, 2, 3]) {
    it(`round ${round}: all ${BURST} requests received before the signal are answered; new connections are refused; exit 0`, async () => {
      const port = await freePort()
      const base = `http://127.0.0.1:${port}`
      api = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'api', '--service', 'invoice'], {
        env: { ...process.env, ...sys.env, INVOICE_PORT: String(port) },
        stdio: ['ignore', 'ignore', 'inherit'],
      })
      await until('api up', async () => (await get(`${base}/healthz`)).status === 200)

      const calls = Array.from({ length: BURST }, (_, i) => postAlone(base, '/api/v1/signup', { email: `burst-${round}-${i}@example.com` }))
      const ports = await Promise.all(calls.map((c) => c.sent))
      await until('the server to have received every request', async () => receivedByServer(port, ports), 10_000, 2)
      const exited = waitForExit(api)
      api.kill('SIGTERM')

      const answers = await Promise.all(calls.map((c) => c.answer))
      assert.deepEqual(answers, Array(BURST).fill(200), `answers: ${answers.join(' ')}`)
      await until('new connections refused', async () => (await postAlone(base, '/api/v1/signup', { email: 'late@example.com' }).answer) === 'ECONNREFUSED')
      assert.equal(await exited, 0)
    })
  }
})
