// A request Node's HTTP parser refuses gets its documented JSON answer (400, 431) with
// Connection: close and then a closed connection also when it comes on a keep-alive connection
// that has already been answered (nothing was answered at all before: the answer was written only
// while no byte had been written on the socket), and when it is pipelined behind good requests,
// whose answers come first, in order (nothing after an answer that closes the connection, no
// second answer to a request answered 413 before its body was read). Both on the hot evaluate
// route (answered before Koa) and on a Koa route, over a raw socket, and with Node's own fetch on
// a pooled connection.
import assert from 'node:assert/strict'
import diagnostics from 'node:diagnostics_channel'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { flagsAccount, type FlagsAccount } from './helpers/flags.ts'
import { post } from './helpers/http.ts'
import { RawConnection as Connection, type RawAnswer as Answer } from './helpers/raw-http.ts'
import { startSystem, type TestSystem } from './helpers/system.ts'

const execFileP = promisify(execFile)

/** fetch, with the reason of a failure (undici's cause: "other side closed") in the error's message. */
async function fetchOrWhy(url: string, init: RequestInit): Promise<Response> {
  try {
    return await fetch(url, init)
  } catch (e) {
    const cause = (e as { cause?: { code?: string; message?: string } }).cause
    throw new Error(`fetch failed: ${cause?.code ?? ''} ${cause?.message ?? String(e)}`)
  }
}

const MALFORMED = /^Malformed HTTP request/
/** What each request the parser refuses is answered with. */
const REFUSED: Array<{ name: string; request: (path: string, auth: string) => string; status: number; error: RegExp }> = [
  {
    name: 'a bad chunk size',
    request: (p, a) => `POST ${p} HTTP/1.1\r\nHost: x\r\n${a}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`,
    status: 400,
    error: MALFORMED,
  },
  {
    name: 'two different Content-Lengths',
    request: (p, a) => `POST ${p} HTTP/1.1\r\nHost: x\r\n${a}Content-Type: application/json\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{} `,
    status: 400,
    error: MALFORMED,
  },
  {
    name: 'Content-Length and Transfer-Encoding',
    request: (p, a) => `POST ${p} HTTP/1.1\r\nHost: x\r\n${a}Content-Type: application/json\r\nContent-Length: 7\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n`,
    status: 400,
    error: MALFORMED,
  },
  {
    name: 'a header over 16 KiB',
    request: (p, a) => `POST ${p} HTTP/1.1\r\nHost: x\r\n${a}X-Big: ${'x'.repeat(17 * 1024)}\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}`,
    status: 431,
    error: /^Request headers too large$/,
  },
  {
    name: 'an invalid character in a header',
    request: (p, a) => `POST ${p} HTTP/1.1\r\nHost: x\r\n${a}X-Bad: a\x01b\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}`,
    status: 400,
    error: MALFORMED,
  },
  {
    name: 'a request line that is garbage',
    request: () => `\x16\x03\x01\x02\x00 not http at all\r\n\r\n`,
    status: 400,
    error: MALFORMED,
  },
]

/** Asserts the documented answer to a refused request, then a graceful close with nothing after it. */
async function assertRefused(conn: Connection, status: number, error: RegExp, what: string): Promise<void> {
  const a = await conn.answer()
  assert.equal(a.status, status, `${what}: ${a.status} ${a.body.toString()}`)
  assert.match(a.headers['content-type'] ?? '', /^application\/json/, what)
  assert.equal(a.headers.connection?.toLowerCase(), 'close', what)
  assert.match(JSON.parse(a.body.toString()).error, error, what)
  const end = await conn.end()
  assert.ok(end.fin, `${what}: the server closed the connection`)
  assert.equal(end.reset, false, `${what}: with a FIN, not a reset`)
  assert.equal(end.rest, '', `${what}: nothing after the answer`)
}

describe('platform: a malformed request on a reused keep-alive connection', function () {
  this.timeout(60_000)
  let sys: TestSystem
  let acc: FlagsAccount

  before(async () => {
    sys = await startSystem({ services: ['flags'], workers: false })
    acc = await flagsAccount(sys, 'business')
    const f = await post(`${acc.project}/flags`, { key: 'on', enabled: true, default_value: 'a' }, { key: acc.apiKey })
    assert.equal(f.status, 201, f.text)
  })
  after(async () => sys?.stop())

  const evaluateBody = () => JSON.stringify({ sdk_key: acc.sdkKey, flags: ['on'], context: { user_id: 'u1' } })
  /** The two paths: the hot evaluate route (answered before Koa) and a Koa route (an API key's project list). */
  const PATHS = [
    {
      name: 'the hot evaluate route',
      path: '/api/v1/evaluate',
      auth: () => '',
      good: () => `POST /api/v1/evaluate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(evaluateBody())}\r\n\r\n${evaluateBody()}`,
      assertGood: (a: Answer) => assert.deepEqual(JSON.parse(a.body.toString()).flags?.on?.value, 'a', a.body.toString()),
    },
    {
      name: 'a Koa route',
      path: '/api/v1/projects',
      auth: () => `Authorization: Bearer ${acc.apiKey}\r\n`,
      good: () => `GET /api/v1/projects HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${acc.apiKey}\r\n\r\n`,
      assertGood: (a: Answer) => assert.equal(JSON.parse(a.body.toString()).projects?.[0]?.id, acc.projectId, a.body.toString()),
    },
  ]

  for (const p of PATHS) {
    describe(`on ${p.name}`, () => {
      async function good(conn: Connection, what: string): Promise<void> {
        const a = await conn.answer()
        assert.equal(a.status, 200, `${what}: ${a.body.toString()}`)
        assert.notEqual(a.headers.connection?.toLowerCase(), 'close', `${what}: kept alive`)
        p.assertGood(a)
      }

      for (const r of REFUSED) {
        it(`${r.name}, after a good request answered on the same connection: ${r.status} JSON, then closed`, async () => {
          const conn = await Connection.open(sys.root.flags)
          try {
            conn.write(p.good())
            await good(conn, 'the first request')
            conn.write(p.good())
            await good(conn, 'the second request')
            conn.write(r.request(p.path, p.auth()))
            await assertRefused(conn, r.status, r.error, r.name)
          } finally {
            conn.destroy()
          }
        })
      }

      it('on a fresh connection (as before): the same JSON 400, then closed', async () => {
        const conn = await Connection.open(sys.root.flags)
        try {
          conn.write(REFUSED[0]!.request(p.path, p.auth()))
          await assertRefused(conn, 400, MALFORMED, 'fresh')
        } finally {
          conn.destroy()
        }
      })

      for (const r of [REFUSED[0]!, REFUSED[1]!, REFUSED[3]!]) {
        it(`pipelined in one write behind two good requests, ${r.name}: 200, 200, then ${r.status} JSON, then closed`, async () => {
          const conn = await Connection.open(sys.root.flags)
          try {
            conn.write(p.good() + p.good() + r.request(p.path, p.auth()))
            await good(conn, 'the first pipelined request')
            await good(conn, 'the second pipelined request')
            await assertRefused(conn, r.status, r.error, `pipelined ${r.name}`)
          } finally {
            conn.destroy()
          }
        })
      }

      it('pipelined in one write and the client half-closes at once: 200, then the 400 JSON, then closed', async () => {
        // Node's server ends its side when the client does; the answers owed must get out first.
        const conn = await Connection.open(sys.root.flags)
        try {
          conn.write(p.good() + REFUSED[1]!.request(p.path, p.auth()))
          conn.halfClose()
          await good(conn, 'the pipelined good request')
          await assertRefused(conn, 400, MALFORMED, 'after a half-close')
        } finally {
          conn.destroy()
        }
      })

      it('pipelined behind a request that asked for Connection: close: its 200, then the close, nothing after it', async () => {
        const conn = await Connection.open(sys.root.flags)
        try {
          conn.write(p.good().replace('Host: x\r\n', 'Host: x\r\nConnection: close\r\n') + REFUSED[1]!.request(p.path, p.auth()))
          const a = await conn.answer()
          assert.equal(a.status, 200, a.body.toString())
          assert.equal(a.headers.connection?.toLowerCase(), 'close')
          const end = await conn.end()
          assert.ok(end.fin && !end.reset, 'closed with a FIN')
          assert.equal(end.rest, '', 'no answer after the one that closed the connection')
        } finally {
          conn.destroy()
        }
      })

      it('a chunked body over 1 MiB: 413 JSON, and the same connection serves the next request', async () => {
        const conn = await Connection.open(sys.root.flags)
        try {
          const chunk = Buffer.alloc(1100 * 1024, 0x20)
          conn.write(`POST ${p.path} HTTP/1.1\r\nHost: x\r\n${p.auth()}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n${chunk.length.toString(16)}\r\n`)
          conn.write(chunk)
          conn.write('\r\n0\r\n\r\n')
          const a = await conn.answer()
          assert.equal(a.status, 413, a.body.toString())
          assert.notEqual(a.headers.connection?.toLowerCase(), 'close')
          conn.write(p.good())
          await good(conn, 'the request after the 413')
        } finally {
          conn.destroy()
        }
      })

      it('a bad chunk in the body of a request already answered 413 (over 1 MiB): the 413 only, then closed', async () => {
        const conn = await Connection.open(sys.root.flags)
        try {
          conn.write(p.good())
          await good(conn, 'the first request')
          const chunk = Buffer.alloc(1100 * 1024, 0x20)
          conn.write(`POST ${p.path} HTTP/1.1\r\nHost: x\r\n${p.auth()}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n${chunk.length.toString(16)}\r\n`)
          conn.write(chunk)
          conn.write('\r\n')
          const a = await conn.answer()
          assert.equal(a.status, 413, a.body.toString())
          // Only now the refused bytes, still in that request's body.
          conn.write('zz\r\n\r\n')
          const end = await conn.end()
          assert.ok(end.fin && !end.reset, 'closed with a FIN')
          assert.equal(end.rest, '', 'no second answer to the request answered already')
        } finally {
          conn.destroy()
        }
      })
    })
  }

  it("Node's fetch on its pooled keep-alive connection: good requests, then a header over 16 KiB gets the 431 JSON, then the pool goes on", async () => {
    // Which connection each request goes out on (undici's diagnostics), to know the 431 came on a reused one.
    const sentOn = new Map<object, number>()
    let lastCount = 0
    const onHeaders = (m: unknown) => {
      const socket = (m as { socket: object }).socket
      lastCount = sentOn.get(socket) ?? 0
      sentOn.set(socket, lastCount + 1)
    }
    diagnostics.subscribe('undici:client:sendHeaders', onHeaders)
    try {
      const evaluate = () => fetch(`${sys.root.flags}/api/v1/evaluate`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: evaluateBody() })
      const projects = (headers: Record<string, string> = {}) => fetchOrWhy(`${sys.root.flags}/api/v1/projects`, { headers: { authorization: `Bearer ${acc.apiKey}`, ...headers } })
      for (let round = 0; round < 3; round++) {
        for (let i = 0; i < 5; i++) {
          const a = await evaluate()
          const text = await a.text()
          assert.equal(a.status, 200, text)
          const b = await projects()
          assert.equal(b.status, 200)
          await b.arrayBuffer()
        }
        const big = round === 1
          ? await fetchOrWhy(`${sys.root.flags}/api/v1/evaluate`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-big': 'x'.repeat(17_000 + round) }, body: evaluateBody() })
          : await projects({ 'x-big': 'x'.repeat(17_000 + round) })
        assert.equal(big.status, 431, `round ${round}`)
        assert.deepEqual(await big.json(), { error: 'Request headers too large' })
        assert.ok(lastCount >= 3, `round ${round}: the 431 request went on a pooled connection that had served ${lastCount} requests before`)
      }
      const after = await evaluate()
      assert.equal(after.status, 200, 'a new connection serves the next request')
    } finally {
      diagnostics.unsubscribe('undici:client:sendHeaders', onHeaders)
    }
  })

  it("Node's fetch in another process, a pooled connection reused for each: good requests, then a header over 16 KiB with 3 MiB of body still being sent, 20 times: 431 JSON each time", async () => {
    // In another process, so that the server reads while fetch is still writing the body (in this
    // one they take turns), as platform-client-error-close.test.ts does on fresh connections.
    const script = `
      const [url, sdkKey] = process.argv.slice(1)
      const { subscribe } = await import('node:diagnostics_channel')
      // How many requests each connection had carried when the next one went out on it.
      const sentOn = new Map(); let before = 0
      subscribe('undici:client:sendHeaders', ({ socket }) => { before = sentOn.get(socket) ?? 0; sentOn.set(socket, before + 1) })
      const body = Buffer.alloc(3 * 1024 * 1024, 'n'); const out = []
      const good = JSON.stringify({ sdk_key: sdkKey, flags: ['on'], context: {} })
      for (let i = 0; i < 20; i++) {
        try {
          for (let j = 0; j < 3; j++) {
            const g = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: good })
            if (g.status !== 200) out.push('good request: ' + g.status)
            await g.arrayBuffer()
          }
          const r = await fetch(url, { method: 'POST', headers: { 'x-big': 'x'.repeat(17000 + i * 1000), 'content-type': 'application/json' }, body })
          out.push((before > 0 ? 'reused: ' : 'fresh: ') + r.status + ' ' + (await r.text()))
        } catch (e) { out.push('failed: ' + (e.cause?.code ?? '') + ' ' + (e.cause?.message ?? e.message)) }
      }
      console.log(JSON.stringify(out))`
    const { stdout } = await execFileP(process.execPath, ['--input-type=module', '-e', script, `${sys.root.flags}/api/v1/evaluate`, acc.sdkKey], { maxBuffer: 1 << 20 })
    const answers: string[] = JSON.parse(stdout)
    assert.equal(answers.length, 20)
    assert.deepEqual([...new Set(answers)], ['reused: 431 {"error":"Request headers too large"}'])
  })
})
