// A request refused by Node's HTTP parser or by a route before its body was read (oversized
// headers, a body over the limit) gets its 4xx JSON answer through to the client: the server
// half-closes after the answer and reads what the client is still sending, so no TCP reset
// (sent when unread bytes are discarded) throws the answer away. Checked with Node's fetch, which
// keeps sending while the answer arrives, and with a raw socket that sends everything first.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import net from 'node:net'
import { promisify } from 'node:util'
import { startSystem, type TestSystem } from './helpers/system.ts'
import { createEndpoint, signup } from './helpers/webhooks.ts'

const execFileP = promisify(execFile)

/** Send the whole request at once without reading, then read the answer until the server closes. */
function rawAll(url: string, request: Buffer): Promise<{ status: number; body: string; reset: boolean }> {
  const { hostname, port } = new URL(url)
  return new Promise((resolve, reject) => {
    const s = net.connect({ host: hostname, port: Number(port) })
    const chunks: Buffer[] = []
    let reset = false
    s.on('data', (c) => chunks.push(c))
    s.on('error', (e: NodeJS.ErrnoException) => {
      if (e.code === 'ECONNRESET' || e.code === 'EPIPE') reset = true
      else reject(e)
    })
    s.on('close', () => {
      const text = Buffer.concat(chunks).toString('latin1')
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0)
      resolve({ status, body: text.slice(text.indexOf('\r\n\r\n') + 4), reset })
    })
    s.write(request)
  })
}

describe('platform: a refused request still gets its answer', function () {
  this.timeout(60_000)
  let sys: TestSystem
  before(async () => {
    sys = await startSystem({ services: ['webhooks', 'flags'], workers: false })
  })
  after(async () => sys?.stop())

  it('headers over 16 KiB: fetch in another process reads the 431 JSON, 40 times in a row with 3 MiB bodies still being sent', async () => {
    // In another process, so that the server reads while fetch is still writing (in this one they
    // take turns). A reset lost about one answer in 20 of these before the graceful close.
    const script = `
      const body = Buffer.alloc(3 * 1024 * 1024, 'n'); const out = []
      for (let i = 0; i < 40; i++) {
        try {
          const r = await fetch(process.argv[1], { method: 'POST', headers: { 'x-big': 'x'.repeat(17000 + i * 1000), 'content-type': 'application/json' }, body })
          out.push(r.status + ' ' + (await r.text()))
        } catch (e) { out.push('failed: ' + (e.cause?.code ?? e.message)) }
      }
      console.log(JSON.stringify(out))`
    const { stdout } = await execFileP(process.execPath, ['--input-type=module', '-e', script, `${sys.url.flags}/api/v1/projects`], { maxBuffer: 1 << 20 })
    const answers: string[] = JSON.parse(stdout)
    assert.equal(answers.length, 40)
    assert.deepEqual([...new Set(answers)], ['431 {"error":"Request headers too large"}'])
  })

  it('headers over 16 KiB with a large body sent in one write: a raw socket reads the 431 JSON', async () => {
    const body = Buffer.alloc(2 * 1024 * 1024, 'a')
    const head = `POST /api/v1/projects HTTP/1.1\r\nHost: x\r\nX-Big: ${'x'.repeat(20_000)}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`
    const r = await rawAll(sys.url.flags, Buffer.concat([Buffer.from(head), body]))
    assert.equal(r.status, 431, `got ${r.status}${r.reset ? ' after a reset' : ''}`)
    assert.deepEqual(JSON.parse(r.body), { error: 'Request headers too large' })
    assert.equal(r.reset, false, 'the connection ended with a FIN, not a reset')
  })

  it('a capture body over 25 MiB: fetch reads the 413 JSON', async () => {
    const key = await signup(sys)
    const ep = await createEndpoint(sys, key)
    const r = await fetch(ep.url, { method: 'POST', body: Buffer.alloc(26 * 1024 * 1024, 'b'), headers: { 'content-type': 'application/octet-stream' } })
    assert.equal(r.status, 413)
    assert.match((await r.json()).error, /25 MiB|too large/i)
  })
})
