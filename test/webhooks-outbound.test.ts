// The request rebuild behind forward and replay (src/webhooks/forward/outbound.ts), as known answers:
// which headers go (every end-to-end one, in order and casing) and which do not (hop-by-hop),
// where Host and Content-Length come from, and the target URL. webhooks-headers.test.ts checks
// the same end to end on real sockets; this file is what mutation testing runs (no stores).
import assert from 'node:assert/strict'
import { outboundHeaders, targetUrl } from '../src/webhooks/forward/outbound.ts'

describe('webhooks: outbound request rebuild', () => {
  const target = new URL('http://127.0.0.1:9000/in')

  it('keeps every end-to-end header in order and casing, last one included, and sets Host and Content-Length', () => {
    const raw = ['Host', 'capture.example', 'User-Agent', 'curl/8.5.0', 'x-dup', '1', 'X-DUP', '2', 'Content-Length', '16', 'Content-Type', 'application/json']
    assert.deepEqual(outboundHeaders(raw, target, 16), [
      'Host', '127.0.0.1:9000',
      'User-Agent', 'curl/8.5.0', 'x-dup', '1', 'X-DUP', '2', 'Content-Type', 'application/json',
      'Content-Length', '16',
    ])
  })

  it('drops every hop-by-hop header, in any case, and keeps Authorization', () => {
    const hop = ['host', 'Connection', 'KEEP-ALIVE', 'Proxy-Connection', 'proxy-authenticate', 'Proxy-Authorization', 'TE', 'Trailer', 'Transfer-Encoding', 'Upgrade', 'content-length', 'Expect']
    const raw = hop.flatMap((h, i) => [h, `v${i}`])
    raw.push('Authorization', 'Bearer s3cret')
    assert.deepEqual(outboundHeaders(raw, target, 3), ['Host', '127.0.0.1:9000', 'Authorization', 'Bearer s3cret', 'Content-Length', '3'])
  })

  it('Content-Length: the body length when there is a body or the sender declared one (0 included), else none', () => {
    assert.deepEqual(outboundHeaders(['Accept', '*/*'], target, 0), ['Host', '127.0.0.1:9000', 'Accept', '*/*'])
    assert.deepEqual(outboundHeaders(['Content-Length', '0'], target, 0), ['Host', '127.0.0.1:9000', 'Content-Length', '0'])
    assert.deepEqual(outboundHeaders(['Transfer-Encoding', 'chunked'], target, 7), ['Host', '127.0.0.1:9000', 'Content-Length', '7'])
    assert.deepEqual(outboundHeaders(['Transfer-Encoding', 'chunked'], target, 0), ['Host', '127.0.0.1:9000', 'Content-Length', '0'])
    // A dangling name without a value is not sent.
    assert.deepEqual(outboundHeaders(['Accept', '*/*', 'X-Odd'], target, 0), ['Host', '127.0.0.1:9000', 'Accept', '*/*'])
  })

  it('target URL: the base plus the captured sub-path, the captured query after the base query', () => {
    assert.equal(targetUrl('http://t.example/base?k=v', '/deep/path', 'a=1'), 'http://t.example/base/deep/path?k=v&a=1')
    assert.equal(targetUrl('http://t.example/base/', '/x', ''), 'http://t.example/base/x')
    assert.equal(targetUrl('http://t.example/base//', '/x', ''), 'http://t.example/base/x')
    assert.equal(targetUrl('http://t.example/base', '/', ''), 'http://t.example/base')
    assert.equal(targetUrl('http://t.example/base', '', 'q=1&r=2'), 'http://t.example/base?q=1&r=2')
    assert.equal(targetUrl('http://t.example/', '', ''), 'http://t.example/')
  })
})
