// The safe outbound fetch (src/platform/outbound/safe-fetch.ts) against real local HTTP servers: which
// addresses count as public, redirects re-checked at every hop, the size cap, and the timeout.
import assert from 'node:assert/strict'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { checkUrlShape, isPublicAddress, OutboundError, safeFetch } from '../src/platform/outbound/safe-fetch.ts'

async function rejectsWith(p: Promise<unknown>, code: OutboundError['code'], message?: RegExp): Promise<void> {
  await assert.rejects(p, (err: unknown) => {
    assert.ok(err instanceof OutboundError, `expected an OutboundError, got ${String(err)}`)
    assert.equal(err.code, code, err.message)
    if (message) assert.match(err.message, message)
    return true
  })
}

describe('platform: safe fetch', () => {
  describe('isPublicAddress', () => {
    const notPublic = [
      '127.0.0.1', '127.8.8.8', '0.0.0.0', '10.1.2.3', '172.16.0.1', '172.31.255.255', '192.168.1.1',
      '169.254.169.254', // cloud metadata
      '100.64.0.1', // carrier-grade NAT
      '224.0.0.1', '255.255.255.255', '192.0.2.1', '240.0.0.1',
      '::', '::1', 'fe80::1', 'fc00::1', 'fd12:3456::1', 'ff02::1',
      '::ffff:127.0.0.1', '::ffff:10.0.0.1', '::ffff:169.254.169.254', // IPv4-mapped
      '64:ff9b::7f00:1', // NAT64 of 127.0.0.1
      '2002:7f00:1::', // 6to4 of 127.0.0.1
      'not-an-ip', '', '1.2.3', '999.1.1.1',
    ]
    const isPublic = ['8.8.8.8', '1.1.1.1', '93.184.216.34', '172.32.0.1', '100.128.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8']
    for (const a of notPublic) it(`refuses ${a || '(empty)'}`, () => assert.equal(isPublicAddress(a), false))
    for (const a of isPublic) it(`allows ${a}`, () => assert.equal(isPublicAddress(a), true))
  })

  describe('checkUrlShape', () => {
    for (const [url, re] of [
      ['not a url', /not valid/],
      ['ftp://example.com/x', /http or https/],
      ['file:///etc/passwd', /http or https/],
      ['http://user:pass@example.com/', /credentials/],
      ['http://user@example.com/', /credentials/],
      ['http://:pass@example.com/', /credentials/],
    ] as const) {
      it(`refuses ${url}`, () => assert.throws(() => checkUrlShape(url), (e: unknown) => e instanceof OutboundError && e.code === 'invalid_url' && re.test(e.message)))
    }
    it('accepts http and https URLs', () => {
      assert.equal(checkUrlShape('https://example.com/a?b=1').hostname, 'example.com')
      assert.equal(checkUrlShape('http://[::1]:8080/').hostname, '[::1]')
    })
  })

  describe('against local servers', () => {
    let server: Server
    let origin: string
    let port: number
    const hits: string[] = []

    before(async () => {
      server = createServer((req, res) => {
        hits.push(req.url!)
        const u = new URL(req.url!, 'http://x')
        switch (u.pathname) {
          case '/ok':
            return res.writeHead(200, { 'content-type': 'text/plain', 'x-test': 'yes' }).end('hello')
          case '/echo': {
            const chunks: Buffer[] = []
            req.on('data', (c) => chunks.push(c))
            req.on('end', () => res.writeHead(200).end(`${req.method} ${Buffer.concat(chunks).toString()}`))
            return
          }
          case '/redirect':
            return res.writeHead(302, { location: u.searchParams.get('to')! }).end()
          case '/loop':
            return res.writeHead(302, { location: '/loop' }).end()
          case '/big-declared':
            return res.writeHead(200, { 'content-length': String(2_000_000) }).end(Buffer.alloc(2_000_000))
          case '/big-streamed':
            res.writeHead(200)
            for (let i = 0; i < 40; i++) res.write(Buffer.alloc(50_000))
            return res.end()
          case '/cookies':
            return res.writeHead(200, [['Set-Cookie', 'a=1'], ['Set-Cookie', 'b=2']]).end()
          case '/exact-declared':
            return res.writeHead(200, { 'content-length': '1000' }).end(Buffer.alloc(1000, 1))
          case '/located-200':
            return res.writeHead(200, { location: '/ok' }).end('stay')
          case '/located-400':
            return res.writeHead(400, { location: '/ok' }).end('bad')
          case '/exact':
            return res.writeHead(200).end(Buffer.alloc(1000, 1))
          case '/hang':
            return // never answers
          case '/slow-body':
            res.writeHead(200, { 'content-length': '10' })
            res.write('12345') // the rest never comes
            return
          default:
            return res.writeHead(404).end()
        }
      })
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
      port = (server.address() as AddressInfo).port
      origin = `http://127.0.0.1:${port}`
    })
    after(() => {
      server.closeAllConnections()
      server.close()
    })

    const onlyLoopback1 = (a: string) => a === '127.0.0.1'

    it('fetches status, headers and body when the target is allowed', async () => {
      const r = await safeFetch(`${origin}/ok`, { allowPrivate: true })
      assert.equal(r.status, 200)
      assert.equal(r.headers['x-test'], 'yes')
      assert.equal(r.body.toString(), 'hello')
      // A repeated header comes back as one value, joined the way HTTP allows.
      assert.equal((await safeFetch(`${origin}/cookies`, { allowPrivate: true })).headers['set-cookie'], 'a=1, b=2')
    })

    it('sends the method and body it is given', async () => {
      const r = await safeFetch(`${origin}/echo`, { allowPrivate: true, method: 'POST', body: Buffer.from('payload'), headers: { 'content-type': 'text/plain' } })
      assert.equal(r.body.toString(), 'POST payload')
    })

    it('refuses a private IP literal without connecting', async () => {
      const before = hits.length
      await rejectsWith(safeFetch(`${origin}/ok`, { allowPrivate: false }), 'blocked', /127\.0\.0\.1/)
      assert.equal(hits.length, before)
    })

    it('refuses a host name that resolves to a private address (checked after DNS)', async () => {
      const before = hits.length
      await rejectsWith(safeFetch(`http://localhost:${port}/ok`, { allowPrivate: false }), 'blocked', /localhost/)
      assert.equal(hits.length, before)
    })

    it('refuses a redirect to a private address, even when the first hop was allowed', async () => {
      for (const to of [`http://127.0.0.2:${port}/ok`, 'http://169.254.169.254/latest/meta-data/', `http://[::1]:${port}/ok`, 'http://10.0.0.1/']) {
        const before = hits.filter((h) => h === '/ok').length
        await rejectsWith(
          safeFetch(`${origin}/redirect?to=${encodeURIComponent(to)}`, { allowPrivate: false, allowAddress: onlyLoopback1, maxRedirects: 3 }),
          'blocked',
        )
        assert.equal(hits.filter((h) => h === '/ok').length, before, `${to} was never contacted`)
      }
    })

    it('follows allowed redirects up to the limit, and refuses non-http targets', async () => {
      const r = await safeFetch(`${origin}/redirect?to=/ok`, { allowPrivate: false, allowAddress: onlyLoopback1, maxRedirects: 1 })
      assert.equal(r.body.toString(), 'hello')
      assert.equal(r.url, `${origin}/ok`)
      await rejectsWith(safeFetch(`${origin}/loop`, { allowPrivate: true, maxRedirects: 3 }), 'redirects', /^more than 3 redirects$/)
      // Exactly the limit is followed; one more hop is refused.
      const twoHops = `${origin}/redirect?to=${encodeURIComponent('/redirect?to=/ok')}`
      assert.equal((await safeFetch(twoHops, { allowPrivate: true, maxRedirects: 2 })).body.toString(), 'hello')
      await rejectsWith(safeFetch(twoHops, { allowPrivate: true, maxRedirects: 1 }), 'redirects', /^more than 1 redirects$/)
      await rejectsWith(safeFetch(`${origin}/redirect?to=${encodeURIComponent('file:///etc/passwd')}`, { allowPrivate: true, maxRedirects: 3 }), 'invalid_url')
    })

    it('does not follow redirects unless asked to, nor a Location on an answer that is not a 3xx', async () => {
      const r = await safeFetch(`${origin}/redirect?to=/ok`, { allowPrivate: true })
      assert.equal(r.status, 302)
      const ok = await safeFetch(`${origin}/located-200`, { allowPrivate: true, maxRedirects: 3 })
      assert.deepEqual([ok.status, ok.body.toString()], [200, 'stay'])
      const bad = await safeFetch(`${origin}/located-400`, { allowPrivate: true, maxRedirects: 3 })
      assert.deepEqual([bad.status, bad.body.toString()], [400, 'bad'])
    })

    it('fetches a host name when private targets are allowed', async () => {
      const r = await safeFetch(`http://localhost:${port}/ok`, { allowPrivate: true })
      assert.equal(r.body.toString(), 'hello')
    })

    it('caps the response size, declared or streamed', async () => {
      await rejectsWith(safeFetch(`${origin}/big-declared`, { allowPrivate: true, maxBytes: 1_000_000 }), 'too_large', /^response is larger than 1000000 bytes$/)
      await rejectsWith(safeFetch(`${origin}/big-streamed`, { allowPrivate: true, maxBytes: 1_000_000 }), 'too_large', /^response is larger than 1000000 bytes$/)
      // Exactly the cap is allowed, streamed or declared.
      for (const path of ['/exact', '/exact-declared']) {
        const exact = await safeFetch(`${origin}${path}`, { allowPrivate: true, maxBytes: 1000 })
        assert.equal(exact.body.length, 1000, path)
      }
    })

    it('times out a server that never answers, or stops mid-body', async () => {
      await rejectsWith(safeFetch(`${origin}/hang`, { allowPrivate: true, timeoutMs: 300 }), 'timeout', /^no complete answer within 300 ms$/)
      await rejectsWith(safeFetch(`${origin}/slow-body`, { allowPrivate: true, timeoutMs: 300 }), 'timeout')
    })

    it('keeps an answer that arrived while the process was too busy to read it before the deadline', async () => {
      // The target answers at once, then this process's event loop is blocked past the timeout
      // (as a CPU-starved worker's is): timer and answer come due in the same loop turn.
      const busy = createServer((_req, res) => {
        res.end('answered')
        const until = performance.now() + 600
        while (performance.now() < until);
      })
      await new Promise<void>((r) => busy.listen(0, '127.0.0.1', r))
      try {
        const r = await safeFetch(`http://127.0.0.1:${(busy.address() as AddressInfo).port}/`, { allowPrivate: true, timeoutMs: 300 })
        assert.deepEqual([r.status, r.body.toString()], [200, 'answered'])
      } finally {
        busy.closeAllConnections()
        await new Promise((r) => busy.close(r))
      }
    })

    it('reports a refused connection as a network error', async () => {
      const closed = createServer()
      await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r))
      const deadPort = (closed.address() as AddressInfo).port
      await new Promise((r) => closed.close(r))
      await rejectsWith(safeFetch(`http://127.0.0.1:${deadPort}/`, { allowPrivate: true, timeoutMs: 2000 }), 'network')
    })
  })
})
