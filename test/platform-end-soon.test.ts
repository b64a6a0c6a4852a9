// Answers finished at the end of the event-loop turn (src/platform/http/end-soon.ts), over real
// HTTP on 127.0.0.1: each request gets its own body (pipelined ones in order), a response is not
// ended before the turn is over, and a client gone before its answer is written keeps no one else
// from theirs.
import assert from 'node:assert/strict'
import http from 'node:http'
import net, { type AddressInfo } from 'node:net'
import { endSoon } from '../src/platform/http/end-soon.ts'

describe('platform: answers written at the end of the turn', () => {
  let server: http.Server
  let base: string
  const endedInTurn: boolean[] = []
  const gone: Array<() => void> = []
  let held: { res: http.ServerResponse; body: string } | undefined
  let heldArrived: () => void = () => {}

  before(async () => {
    server = http.createServer((req, res) => {
      const body = JSON.stringify({ path: req.url })
      res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) })
      if (req.url === '/hold') {
        held = { res, body }
        heldArrived()
        return
      }
      if (req.url === '/trigger') {
        // Queues the held answer while this one is being ended: in the middle of a flush.
        res.once('prefinish', () => endSoon(held!.res, held!.body))
        endSoon(res, body)
        return
      }
      if (req.url === '/gone') {
        // The client leaves before the turn ends: its socket is destroyed, its answer still queued.
        endSoon(res, body)
        req.socket.destroy()
        gone.forEach((f) => f())
        return
      }
      endSoon(res, body)
      endedInTurn.push(res.writableEnded)
    })
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  })
  after(async () => {
    server.closeAllConnections()
    await new Promise((r) => server.close(r))
  })

  it('gives each of 100 concurrent requests its own answer, none ended before its turn was over', async () => {
    endedInTurn.length = 0
    const answers = await Promise.all(
      Array.from({ length: 100 }, async (_, i) => {
        const res = await fetch(`${base}/r/${i}?é=${encodeURIComponent('ü')}`)
        return { status: res.status, body: (await res.json()) as { path: string } }
      }),
    )
    answers.forEach((a, i) => {
      assert.equal(a.status, 200)
      assert.equal(a.body.path, `/r/${i}?%C3%A9=%C3%BC`)
    })
    assert.equal(endedInTurn.length, 100)
    assert.ok(endedInTurn.every((ended) => ended === false), 'end() ran inside the handler')
  })

  it('answers pipelined requests on one connection in order', async () => {
    const port = (server.address() as AddressInfo).port
    const socket = net.connect(port, '127.0.0.1')
    let text = ''
    socket.setEncoding('utf8')
    socket.on('data', (d: string) => (text += d))
    // Three requests in one write: all three are handled (and their answers queued) in one turn.
    socket.write(['/p/1', '/p/2', '/p/3'].map((p) => `GET ${p} HTTP/1.1\r\nHost: x\r\n\r\n`).join(''))
    const deadline = Date.now() + 5_000
    while ((text.match(/HTTP\/1\.1 200/g) ?? []).length < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10))
    socket.destroy()
    assert.deepEqual(
      [...text.matchAll(/\{"path":"([^"]+)"\}/g)].map((m) => m[1]),
      ['/p/1', '/p/2', '/p/3'],
    )
  })

  it('writes an answer queued while the answers of a turn are being ended', async () => {
    const arrived = new Promise<void>((r) => (heldArrived = r))
    const first = fetch(`${base}/hold`).then((r) => r.json() as Promise<{ path: string }>)
    await arrived
    const second = fetch(`${base}/trigger`).then((r) => r.json() as Promise<{ path: string }>)
    const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error('an answer was never written')), 3_000))
    assert.deepEqual(await Promise.race([Promise.all([first, second]), timeout]), [{ path: '/hold' }, { path: '/trigger' }])
  })

  it('writes the other answers of a turn when one client has gone', async () => {
    const goneSeen = new Promise<void>((r) => gone.push(r))
    const lost = fetch(`${base}/gone`).then(
      () => 'answered',
      () => 'failed',
    )
    const others = Array.from({ length: 20 }, (_, i) => fetch(`${base}/ok/${i}`).then((r) => r.json() as Promise<{ path: string }>))
    await goneSeen
    assert.deepEqual(
      (await Promise.all(others)).map((b) => b.path),
      Array.from({ length: 20 }, (_, i) => `/ok/${i}`),
    )
    assert.equal(await lost, 'failed')
    // The server is still serving.
    assert.equal(((await (await fetch(`${base}/after`)).json()) as { path: string }).path, '/after')
  })
})
