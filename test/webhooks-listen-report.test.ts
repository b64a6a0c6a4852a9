// How `listen` reports a local result to the service (scripts/listen/report.ts), against a real
// HTTP server on 127.0.0.1 that misbehaves the ways a network does: a pooled keep-alive connection
// that went silent (a stall) or was reset ("fetch failed") is retried on a fresh connection and the
// report arrives; a 4xx is final and not repeated.
import assert from 'node:assert/strict'
import http from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import { reportResult } from '../scripts/listen/report.ts'

describe('webhooks: listen reports a local result on a fresh connection when the pooled one is dead', function () {
  this.timeout(30_000)
  let server: http.Server
  let url: string
  const received: Array<{ port: number; body: string }> = []
  const sockets = new Set<Socket>()
  /** Sockets that read requests but never answer (a connection that died silently). */
  const silent = new Set<Socket>()
  let silentHits = 0
  let resetNext = false
  let answer = 200
  before(async () => {
    server = http.createServer((req, res) => {
      let body = ''
      req.on('data', (c) => (body += c))
      req.on('end', () => {
        if (silent.has(req.socket)) return void silentHits++
        if (resetNext) {
          resetNext = false
          return void req.socket.destroy()
        }
        received.push({ port: req.socket.remotePort!, body })
        res.statusCode = answer
        res.end('{}')
      })
    })
    server.on('connection', (s) => sockets.add(s.on('close', () => sockets.delete(s))))
    server.keepAliveTimeout = 60_000
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/report`
  })
  beforeEach(() => {
    received.length = 0
    silentHits = 0
    answer = 200
    resetNext = false
  })
  after(async () => {
    server.closeAllConnections()
    await new Promise((r) => server.close(r))
  })

  it('a pooled connection that went silent: the report gives up on it and arrives on a new connection', async () => {
    assert.equal(await reportResult(url, {}, { n: 1 }, 1_000), null)
    const pooled = received[0]!.port
    // fetch puts the connection back in its pool on a later turn of the event loop (an ordering,
    // not a timing: in listen, reports are always separated by a delivery).
    await new Promise((r) => setImmediate(r))
    // Every connection open now goes silent, as after a stall; fetch's pool still holds one.
    for (const s of sockets) silent.add(s)
    assert.equal(await reportResult(url, {}, { n: 2 }, 1_000), null)
    assert.equal(silentHits, 1, 'the first try went to the pooled, silent connection')
    assert.equal(received.length, 2)
    assert.equal(received[1]!.body, '{"n":2}')
    assert.notEqual(received[1]!.port, pooled, 'the retry came on another connection')
  })

  it('a connection reset mid-request ("fetch failed"): retried on a fresh connection', async () => {
    resetNext = true
    assert.equal(await reportResult(url, {}, { n: 3 }, 1_000), null)
    assert.deepEqual(received.map((r) => r.body), ['{"n":3}'])
  })

  it('a 4xx answer is final: one request, and the answer says why', async () => {
    answer = 404
    assert.equal(await reportResult(url, {}, { n: 4 }, 1_000), 'HTTP 404')
    assert.equal(received.length, 1)
  })
})
