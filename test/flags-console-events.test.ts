// The console's live view (GET /api/v1/projects/{id}/events, Server-Sent Events) across two API
// replicas: a change made through replica A (Bearer key) is a `change` event on a console stream
// held on replica B (session cookie), with kind, key, environment, version and deletion; only the
// project's own changes; a reconnect with Last-Event-ID gets what it missed; a rotated key ends the
// stream with `ended`; refusals are JSON, never a stream; OpenAPI.
import assert from 'node:assert/strict'
import { assertJsonError, call, get, post } from './helpers/http.ts'
import { flagsAccount, type FlagsAccount } from './helpers/flags.ts'
import { signIn, withSession } from './helpers/console-session.ts'
import { startSystem, type TestSystem } from './helpers/system.ts'

interface Frame {
  event: string
  id?: string
  data: any
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

async function eventually<T>(check: () => T | undefined | false, what: string, timeoutMs = 15_000): Promise<T> {
  const started = Date.now()
  for (;;) {
    const v = check()
    if (v) return v
    if (Date.now() - started > timeoutMs) throw new Error(`${what}: not within ${timeoutMs} ms`)
    await sleep(20)
  }
}

/** A stream read with fetch, parsed into frames as they arrive. */
async function openStream(url: string, headers: Record<string, string>) {
  const ac = new AbortController()
  const res = await fetch(url, { headers, signal: ac.signal })
  const state = { frames: [] as Frame[], ended: false, buf: '' }
  if (res.headers.get('content-type')?.startsWith('text/event-stream')) {
    ;(async () => {
      const dec = new TextDecoder()
      try {
        for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
          state.buf += dec.decode(chunk, { stream: true })
          let i: number
          while ((i = state.buf.indexOf('\n\n')) >= 0) {
            const block = state.buf.slice(0, i)
            state.buf = state.buf.slice(i + 2)
            const f: Partial<Frame> & { lines: string[] } = { lines: [] }
            for (const line of block.split('\n')) {
              if (line.startsWith('event: ')) f.event = line.slice(7)
              else if (line.startsWith('id: ')) f.id = line.slice(4)
              else if (line.startsWith('data: ')) f.lines.push(line.slice(6))
            }
            if (f.event) state.frames.push({ event: f.event, id: f.id, data: JSON.parse(f.lines.join('\n')) })
          }
        }
      } catch {
        /* aborted */
      }
      state.ended = true
    })()
  }
  return {
    res,
    state,
    close: () => ac.abort(),
    changes: () => state.frames.filter((f) => f.event === 'change').map((f) => f.data),
  }
}

describe('flags console: live events across two replicas', function () {
  let a: TestSystem
  let b: TestSystem
  const open: Array<{ close(): void }> = []
  const track = <T extends { close(): void }>(s: T) => (open.push(s), s)

  before(async () => {
    const env = { FLAGS_STREAM_HEARTBEAT_MS: '300', TRUST_PROXY: 'true' }
    a = await startSystem({ services: ['flags'], workers: false, env })
    b = await startSystem({ services: ['flags'], workers: false, env: { ...env, MONGO_DB: a.env.MONGO_DB!, QUEUE_PREFIX: a.env.QUEUE_PREFIX! } })
  })
  afterEach(() => {
    for (const s of open.splice(0)) s.close()
  })
  after(async () => {
    await b?.stop()
    await a?.stop()
  })

  const onA = (t: FlagsAccount) => t.project
  const onB = (t: FlagsAccount) => t.project.replace(a.root.flags!, b.root.flags!)

  it('a change made on replica A reaches a console stream on replica B: flags, segments, environments, deletions', async () => {
    const t = await flagsAccount(a)
    const s = await signIn(b.root.flags!, t.apiKey)
    const other = await flagsAccount(a)
    const stream = track(await openStream(`${onB(t)}/events`, { cookie: s.cookie }))
    assert.equal(stream.res.status, 200)
    assert.match(stream.res.headers.get('content-type')!, /^text\/event-stream/)
    await eventually(() => stream.state.frames.find((f) => f.event === 'ready'), 'ready')

    assert.equal((await post(`${onA(t)}/flags`, { key: 'banner', default_value: 'x' }, { key: t.apiKey })).status, 201)
    const created = await eventually(() => stream.changes().find((c) => c.key === 'banner'), 'flag created')
    assert.deepEqual({ ...created, id: undefined, at: undefined }, { id: undefined, at: undefined, kind: 'flag', key: 'banner', environment: null, version: 1, type: 'flag.created' })
    assert.match(created.id, /^[0-9a-z]{9}[0-9A-Za-z]{12}$/)
    assert.equal(stream.state.frames.find((f) => f.event === 'change')!.id, created.id, 'the event id is the history entry id')

    assert.equal((await call('PUT', `${onA(t)}/flags/banner`, { json: { enabled: true }, key: t.apiKey })).status, 200)
    const updated = await eventually(() => stream.changes().find((c) => c.key === 'banner' && c.type === 'flag.updated'), 'flag updated')
    assert.equal(updated.version, 2)
    assert.equal(updated.environment, 'production')

    // Another account's change is not this project's news.
    await post(`${onA(other)}/flags`, { key: 'elsewhere' }, { key: other.apiKey })
    assert.equal((await post(`${onA(t)}/segments`, { name: 'beta', conditions: [{ attribute: 'plan', operator: 'eq', value: 'beta' }] }, { key: t.apiKey })).status, 201)
    const seg = await eventually(() => stream.changes().find((c) => c.kind === 'segment'), 'segment created')
    assert.equal(seg.key, 'beta')
    assert.equal(seg.version, 1)
    assert.equal((await post(`${onA(t)}/environments`, { name: 'qa' }, { key: t.apiKey })).status, 201)
    await eventually(() => stream.changes().find((c) => c.kind === 'environment' && c.key === 'qa'), 'environment created')
    assert.equal((await call('DELETE', `${onA(t)}/flags/banner`, { key: t.apiKey })).status, 204)
    const deleted = await eventually(() => stream.changes().find((c) => c.type === 'flag.deleted'), 'flag deleted')
    assert.equal(deleted.deleted, true)
    assert.equal(deleted.version, null)
    assert.ok(!stream.changes().some((c) => c.key === 'elsewhere'))
    // Each change once, in order.
    const ids = stream.changes().map((c) => c.id)
    assert.deepEqual(ids, [...new Set(ids)].sort())
  })

  it('a reconnect with Last-Event-ID gets the changes it missed', async () => {
    const t = await flagsAccount(a)
    const first = track(await openStream(`${onB(t)}/events`, { authorization: `Bearer ${t.apiKey}` }))
    await eventually(() => first.state.frames.find((f) => f.event === 'ready'), 'ready')
    await post(`${onA(t)}/flags`, { key: 'one' }, { key: t.apiKey })
    const seen = await eventually(() => stream1Last(), 'first change')
    function stream1Last() {
      return first.changes().find((c) => c.key === 'one')
    }
    first.close()
    await post(`${onA(t)}/flags`, { key: 'two' }, { key: t.apiKey })
    await post(`${onA(t)}/flags`, { key: 'three' }, { key: t.apiKey })
    const again = track(await openStream(`${onB(t)}/events`, { authorization: `Bearer ${t.apiKey}`, 'last-event-id': seen.id }))
    await eventually(() => again.changes().length >= 2 && again.changes(), 'missed changes')
    assert.deepEqual(again.changes().slice(0, 2).map((c) => c.key), ['two', 'three'])
    assertJsonError(await get(`${onB(t)}/events`, { key: t.apiKey, headers: { 'last-event-id': 'not-an-id' } }), 400, /^Last-Event-ID must be/)
  })

  it('ends the stream with `ended` when the API key is rotated away, or the session signed out', async function () {
    this.timeout(60_000)
    const t = await flagsAccount(a)
    const s = await signIn(b.root.flags!, t.apiKey)
    const stream = track(await openStream(`${onB(t)}/events`, { cookie: s.cookie }))
    const u = await flagsAccount(a)
    const su = await signIn(b.root.flags!, u.apiKey)
    const signedOut = track(await openStream(`${onB(u)}/events`, { cookie: su.cookie }))
    await eventually(() => stream.state.frames.find((f) => f.event === 'ready'), 'ready')
    await eventually(() => signedOut.state.frames.find((f) => f.event === 'ready'), 'ready')
    assert.equal((await withSession(su, 'DELETE', `${b.root.flags}/api/v1/console/session`)).status, 204)
    assert.equal((await withSession(s, 'POST', `${a.root.flags}/api/v1/account/key/rotate`)).status, 200)
    const out = await eventually(() => signedOut.state.frames.find((f) => f.event === 'ended'), 'ended (signed out)', 30_000)
    assert.equal(out.data.error, 'Not signed in')
    const ended = await eventually(() => stream.state.frames.find((f) => f.event === 'ended'), 'ended', 30_000)
    assert.equal(ended.data.error, 'Your session ended: the API key was revoked')
    await eventually(() => stream.state.ended, 'closed')
  })

  it('refuses with JSON, never a stream: no credentials, CSRF-free GET but a dead session, another account, unknown project', async () => {
    const t = await flagsAccount(a)
    const other = await flagsAccount(a)
    assertJsonError(await get(`${onB(t)}/events`), 401)
    assertJsonError(await get(`${onB(t)}/events`, { headers: { cookie: `qw_console_flags=${'B'.repeat(32)}` } }), 401, 'Not signed in')
    assertJsonError(await get(`${onB(other)}/events`, { key: t.apiKey }), 404, 'Project not found')
    assertJsonError(await get(`${b.root.flags}/api/v1/projects/nope/events`, { key: t.apiKey }), 404, 'Project not found')
  })

  it('is documented in /openapi.json as an event stream', async () => {
    const op = (await get(`${a.root.flags}/openapi.json`)).json.paths['/api/v1/projects/{id}/events'].get
    assert.deepEqual(op.responses['200'].content['text/event-stream']['x-sse-events'], ['ready', 'change', 'reset', 'ended'])
  })
})
