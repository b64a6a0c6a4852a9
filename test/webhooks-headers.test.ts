// Forward and replay reproduce the captured header list: every header the sender sent, in its
// order and casing, minus hop-by-hop ones. Senders are raw sockets, so the order is ours to choose
// (fetch would always put its own headers last): one ends with Content-Type as curl does, one
// with Authorization, one sends a chunked body, one has no body at all.
import assert from 'node:assert/strict'
import { DELIVERY_ID_HEADER, deliveryId } from '../src/webhooks/forward/forward.ts'
import { startSystem, type TestSystem } from './helpers/system.ts'
import { get, post } from './helpers/http.ts'
import { rawRequest } from './helpers/raw-http.ts'
import { api, createEndpoint, signup, startTarget, waitFor, type Received, type Target } from './helpers/webhooks.ts'

/** Written out here from docs/webhooks.md, not imported: the code's own list is what is under test. */
const HOP_BY_HOP = /^(host|connection|keep-alive|te|trailer|transfer-encoding|upgrade|proxy-.*|content-length|expect)$/i

const withoutHopByHop = (raw: string[]) => {
  const out: string[] = []
  for (let i = 0; i < raw.length; i += 2) if (!HOP_BY_HOP.test(raw[i]!)) out.push(raw[i]!, raw[i + 1]!)
  return out
}

interface Sender {
  name: string
  method: string
  /** Header lines after Host, in the order sent. */
  headers: string[]
  body: string
  /** The body as the target must receive it (differs from `body` when chunked). */
  bytes: string
}

const SENDERS: Sender[] = [
  {
    name: 'curl-like, Content-Type last',
    method: 'POST',
    headers: ['User-Agent: curl/8.5.0', 'Accept: */*', 'Authorization: Bearer s3cret', 'X-Signature: sha256=abc', 'Content-Length: 16', 'Content-Type: application/json'],
    body: '{"event":"ping"}',
    bytes: '{"event":"ping"}',
  },
  {
    name: 'mixed case and repeats, hop-by-hop in the middle, Authorization last',
    method: 'PUT',
    headers: [
      'content-type: text/plain; charset=utf-8',
      'X-GitHub-Event: push',
      'Connection: keep-alive',
      'x-dup: one',
      'Keep-Alive: timeout=5',
      'X-DUP: two',
      'Proxy-Authorization: Basic eDp5',
      'Content-Length: 5',
      'Webhook-Id: msg_1',
      'Authorization: Bearer last-one',
    ],
    body: 'hello',
    bytes: 'hello',
  },
  {
    name: 'chunked body, TE in the middle, Authorization last',
    method: 'PATCH',
    headers: ['Transfer-Encoding: chunked', 'TE: trailers', 'Stripe-Signature: t=1,v1=ff', 'Content-Type: application/x-www-form-urlencoded', 'authorization: token lower'],
    body: '4\r\na=1&\r\n3\r\nb=2\r\n0\r\n\r\n',
    bytes: 'a=1&b=2',
  },
  {
    name: 'no body, Authorization last',
    method: 'DELETE',
    headers: ['Accept: application/json', 'X-Request-Id: 42', 'Authorization: Basic dTpw'],
    body: '',
    bytes: '',
  },
]

describe('webhooks: forwarded and replayed header lists', () => {
  let sys: TestSystem
  let forwardTarget: Target
  let replayTarget: Target
  let key: string
  before(async () => {
    sys = await startSystem({ services: ['webhooks'], env: { WEBHOOK_FORWARD_SCHEDULE_MS: '0', WEBHOOK_FORWARD_TIMEOUT_MS: '3000' } })
    forwardTarget = await startTarget()
    replayTarget = await startTarget()
    key = await signup(sys, 'starter')
  })
  after(async () => {
    await forwardTarget?.close()
    await replayTarget?.close()
    await sys?.stop()
  })

  /** The received list checked whole: the captured list minus hop-by-hop, then Host and Content-Length for the target. */
  const assertReproduces = (got: Received, captured: string[], target: Target, s: Sender, added: string[] = []) => {
    assert.deepEqual(withoutHopByHop(got.rawHeaders), [...withoutHopByHop(captured), ...added], `${s.name}: headers in order`)
    const host = got.rawHeaders.filter((_, i) => i % 2 === 0 && /^host$/i.test(got.rawHeaders[i]!))
    assert.equal(host.length, 1, `${s.name}: one Host`)
    assert.equal(got.headers.host, new URL(target.url).host)
    assert.equal(got.headers['content-length'], s.bytes.length ? String(s.bytes.length) : undefined)
    assert.equal(got.headers['transfer-encoding'], undefined)
    assert.equal(got.method, s.method)
    assert.equal(got.body.toString(), s.bytes)
  }

  for (const [n, s] of SENDERS.entries()) {
    it(`${s.name}: forward and replay send every end-to-end header in the order received`, async () => {
      // An endpoint of its own, so that the capture is request 1 whichever tests run.
      const ep = await createEndpoint(sys, key, { forward_url: forwardTarget.url })
      const id = 1
      const hook = new URL(ep.url)
      const answer = await rawRequest(ep.url, [`${s.method} ${hook.pathname}/sub?q=${n} HTTP/1.1`, `Host: ${hook.host}`, ...s.headers], s.body)
      assert.equal(answer.status, 200, answer.body.toString())

      const stored = (await get(api(sys, `/endpoints/${ep.endpoint_id}/requests/${id}`), { key })).json
      // What the service stored is what was sent, in order and casing.
      const sent = ['Host', hook.host, ...s.headers.flatMap((l) => [l.slice(0, l.indexOf(':')), l.slice(l.indexOf(':') + 1).trim()])]
      assert.deepEqual(stored.raw_headers, sent)
      assert.ok(withoutHopByHop(sent).length >= 4, 'the sender has end-to-end headers to lose')

      const fwd = await waitFor(() => forwardTarget.received.find((r) => r.url === `/sub?q=${n}`), 20_000, 'the forward')
      // A forward adds only its delivery id, after the captured headers; a replay adds nothing.
      assertReproduces(fwd, sent, forwardTarget, s, [DELIVERY_ID_HEADER, deliveryId(ep.endpoint_id, id)])

      const r = await post(api(sys, `/endpoints/${ep.endpoint_id}/requests/${id}/replay`), { url: `${replayTarget.url}/replay-${n}` }, { key })
      assert.equal(r.status, 200, r.text)
      const rep = replayTarget.received.find((x) => x.url === `/replay-${n}`)
      assert.ok(rep, 'the replay reached the target')
      assertReproduces(rep, sent, replayTarget, s)
    })
  }
})
