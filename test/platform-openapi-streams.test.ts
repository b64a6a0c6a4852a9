// The two event streams are in /openapi.json as what they are: a `text/event-stream` answer with
// its events, so a client generated from the document, or a tool reading it, finds them. Each
// service's document validates against the OpenAPI 3.1 schema, and the events a real stream
// sends are among those documented.
import assert from 'node:assert/strict'
import { Validator } from '@seriousme/openapi-schema-validator'
import { startSystem, type TestSystem } from './helpers/system.ts'
import { get, post } from './helpers/http.ts'
import { createEndpoint, signup } from './helpers/webhooks.ts'

/** The first SSE event (not comment) of a stream. */
async function firstEvent(url: string, headers: Record<string, string>): Promise<{ event: string; id?: string; data: any; type: string | null }> {
  const ac = new AbortController()
  const r = await fetch(url, { headers, signal: ac.signal })
  const reader = r.body!.getReader()
  let buf = ''
  try {
    for (;;) {
      const { value, done } = await reader.read()
      if (done) throw new Error('stream ended')
      buf += Buffer.from(value).toString()
      for (const block of buf.split('\n\n').slice(0, -1)) {
        const fields = Object.fromEntries(block.split('\n').filter((l) => !l.startsWith(':') && l.includes(': ')).map((l) => [l.slice(0, l.indexOf(': ')), l.slice(l.indexOf(': ') + 2)]))
        if (fields.data) return { event: fields.event ?? 'message', id: fields.id, data: JSON.parse(fields.data), type: r.headers.get('content-type') }
      }
    }
  } finally {
    ac.abort()
  }
}

describe('platform: event streams in the OpenAPI documents', function () {
  this.timeout(60_000)
  let sys: TestSystem
  before(async () => {
    sys = await startSystem({ services: ['webhooks', 'flags'], workers: false })
  })
  after(async () => sys?.stop())

  it('each document is valid OpenAPI 3.1', async () => {
    for (const svc of ['webhooks', 'flags'] as const) {
      const doc = (await get(`${sys.root[svc]}/openapi.json`)).json
      const res = await new Validator().validate(doc)
      assert.equal(res.valid, true, `${svc}: ${String(JSON.stringify(res.errors)).slice(0, 1500)}`)
    }
  })

  it('GET /endpoints/{token}/stream: text/event-stream with capture, forward, local_delivery, endpoint and endpoint_deleted; a real capture event matches', async () => {
    const doc = (await get(`${sys.root.webhooks}/openapi.json`)).json
    const op = doc.paths['/api/v1/endpoints/{token}/stream'].get
    const media = op.responses['200'].content['text/event-stream']
    assert.deepEqual(media['x-sse-events'], ['capture', 'forward', 'local_delivery', 'endpoint', 'endpoint_deleted'])
    assert.ok(op.parameters.some((p: any) => p.in === 'header' && p.name === 'Last-Event-ID'))
    const key = await signup(sys)
    const ep = await createEndpoint(sys, key)
    await fetch(ep.url, { method: 'POST', body: 'hello' })
    const ev = await firstEvent(`${sys.url.webhooks}/api/v1/endpoints/${ep.endpoint_id}/stream?last_event_id=0`, { authorization: `Bearer ${key}` })
    assert.match(ev.type ?? '', /^text\/event-stream/)
    assert.ok(media['x-sse-events'].includes(ev.event), ev.event)
    const schema = media.schema.oneOf.find((s: any) => s.properties.event.const === ev.event).properties.data.contentSchema
    for (const field of schema.required) assert.ok(field in ev.data, `documented field ${field} is sent`)
  })

  it('GET /ofrep/v1/stream: text/event-stream with connected and refetchEvaluation messages; a real first message matches', async () => {
    const doc = (await get(`${sys.root.flags}/openapi.json`)).json
    const op = doc.paths['/ofrep/v1/stream'].get
    const media = op.responses['200'].content['text/event-stream']
    const types = media.schema.oneOf.map((s: any) => s.properties.data.contentSchema.properties.type.const)
    assert.deepEqual(types, ['connected', 'refetchEvaluation'])
    assert.ok(op.responses['401'] && op.responses['429'])
    const signupRes = await post(`${sys.url.flags}/api/v1/signup`, { email: `s${Date.now()}@example.com` })
    const ev = await firstEvent(`${sys.root.flags}/ofrep/v1/stream`, { authorization: `Bearer ${signupRes.json.sdk_key}` })
    assert.equal(ev.event, 'message')
    assert.equal(ev.data.type, 'connected')
    assert.equal(ev.id, ev.data.etag)
  })
})
