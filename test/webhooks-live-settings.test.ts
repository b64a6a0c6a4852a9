// An endpoint's own changes on its live stream (GET …/stream): a PATCH and a forwarding pause /
// resume each send an `endpoint` event carrying the endpoint as GET answers it, a deletion an
// `endpoint_deleted` event after which the stream ends (a reconnect is refused with 404); the same
// on a stream open on a second API replica (same MongoDB and Redis); and the `listen` CLI keeps
// delivering captures across a settings event, then stops with a message when the endpoint is deleted.
import assert from 'node:assert/strict'
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { EventSourceMessage } from 'eventsource-parser'
import { startSystem, waitForExit, type TestSystem } from './helpers/system.ts'
import { BIN } from './helpers/cli.ts'
import { call, get, post } from './helpers/http.ts'
import { api, capture, createEndpoint, signup, startTarget, waitFor, type Target } from './helpers/webhooks.ts'
import { openStream } from '../scripts/listen/stream.ts'

interface Opened {
  events: EventSourceMessage[]
  /** Set once the server ended the stream. */
  ended: { done: boolean }
  close(): void
}

async function stream(root: string, token: string, key: string): Promise<Opened> {
  const events: EventSourceMessage[] = []
  const ac = new AbortController()
  const ended = { done: false }
  const s = openStream({ api: root, token, key, signal: ac.signal, onEvent: (e) => events.push(e) })
  s.ended.then(() => (ended.done = true)).catch(() => undefined)
  await s.opened
  return { events, ended, close: () => ac.abort() }
}

const ofType = (o: Opened, type: string) => o.events.filter((e) => e.event === type)
const nth = (o: Opened, type: string, n: number, what: string) => waitFor(() => ofType(o, type)[n - 1], 10_000, what)

describe('webhooks: settings changes and deletion on the live stream', function () {
  this.timeout(60_000)
  let sys: TestSystem
  let replica: TestSystem | null = null
  const open: Opened[] = []
  const targets: Target[] = []
  const children: ChildProcess[] = []
  before(async () => {
    sys = await startSystem({ services: ['webhooks'], workers: false })
  })
  after(async () => {
    for (const o of open) o.close()
    for (const c of children) if (c.exitCode === null) c.kill()
    await Promise.all(targets.map((t) => t.close()))
    await replica?.stop()
    await sys?.stop()
  })
  const listen = async (root: string, token: string, key: string) => {
    const o = await stream(root, token, key)
    open.push(o)
    return o
  }
  const patch = (token: string, body: unknown, key: string) => call('PATCH', api(sys, `/endpoints/${token}`), { json: body, key })
  const target = async () => {
    const t = await startTarget((_r, _i, res) => ((res.statusCode = 202), res.end('local ok')))
    targets.push(t)
    return t
  }

  it('a PATCH sends an `endpoint` event with the endpoint as GET answers it, without an SSE id', async () => {
    const key = await signup(sys, 'starter')
    const t = await target()
    const ep = await createEndpoint(sys, key, { name: 'before' })
    const s = await listen(sys.root.webhooks, ep.endpoint_id, key)
    const changed = await patch(ep.endpoint_id, { name: 'after', response_code: 202, response_body: 'queued', response_content_type: 'text/plain', forward_url: `${t.url}/in` }, key)
    assert.equal(changed.status, 200)
    const ev = await nth(s, 'endpoint', 1, 'the endpoint event')
    assert.equal(ev.id, undefined, 'settings events carry no capture id (they do not move Last-Event-ID)')
    const data = JSON.parse(ev.data)
    assert.deepEqual(data, changed.json)
    assert.deepEqual(data, (await get(api(sys, `/endpoints/${ep.endpoint_id}`), { key })).json)
    assert.deepEqual([data.endpoint_id, data.name, data.response_code, data.response_body, data.response_content_type, data.forward_url, data.forward_paused], [ep.endpoint_id, 'after', 202, 'queued', 'text/plain', `${t.url}/in`, false])
    assert.deepEqual(data.forward_schedule_ms.length > 0, true, 'the view includes the forward schedule as GET does')
    // Clearing the target is a change too.
    await patch(ep.endpoint_id, { forward_url: null }, key)
    const second = JSON.parse((await nth(s, 'endpoint', 2, 'the second endpoint event')).data)
    assert.deepEqual([second.forward_url, second.forward_schedule_ms, second.forward_health], [null, null, null])
    // A refused PATCH changes nothing and sends nothing; captures still flow as before.
    assert.equal((await patch(ep.endpoint_id, { response_code: 99 }, key)).status, 400)
    await capture(ep.url, { body: 'still live' })
    const cap = await nth(s, 'capture', 1, 'a capture after the settings events')
    assert.equal(JSON.parse(cap.data).body, 'still live')
    assert.equal(ofType(s, 'endpoint').length, 2)
  })

  it('pause and resume each send the endpoint with its new forward_paused', async () => {
    const key = await signup(sys, 'pro')
    const t = await target()
    const ep = await createEndpoint(sys, key, { name: 'paused one', forward_url: `${t.url}/in` })
    const s = await listen(sys.root.webhooks, ep.endpoint_id, key)
    const paused = await post(api(sys, `/endpoints/${ep.endpoint_id}/forwarding/pause`), undefined, { key })
    assert.deepEqual(paused.json, { endpoint_id: ep.endpoint_id, forward_paused: true })
    const first = JSON.parse((await nth(s, 'endpoint', 1, 'the pause event')).data)
    assert.deepEqual(first, (await get(api(sys, `/endpoints/${ep.endpoint_id}`), { key })).json)
    assert.equal(first.forward_paused, true)
    assert.equal((await post(api(sys, `/endpoints/${ep.endpoint_id}/forwarding/resume`), undefined, { key })).status, 200)
    const second = JSON.parse((await nth(s, 'endpoint', 2, 'the resume event')).data)
    assert.deepEqual([second.endpoint_id, second.forward_paused, second.forward_url, second.name], [ep.endpoint_id, false, `${t.url}/in`, 'paused one'])
  })

  it('a deletion sends `endpoint_deleted`, then the stream ends; reconnecting is refused with 404', async () => {
    const key = await signup(sys)
    const ep = await createEndpoint(sys, key)
    await capture(ep.url, { body: 'one' })
    await capture(ep.url, { body: 'two' })
    const s = await listen(sys.root.webhooks, ep.endpoint_id, key)
    const other = await createEndpoint(sys, key)
    const bystander = await listen(sys.root.webhooks, other.endpoint_id, key)
    const del = await call('DELETE', api(sys, `/endpoints/${ep.endpoint_id}`), { key })
    assert.equal(del.status, 200)
    const ev = await nth(s, 'endpoint_deleted', 1, 'the deletion event')
    assert.equal(ev.id, undefined)
    assert.deepEqual(JSON.parse(ev.data), { endpoint_id: ep.endpoint_id, deleted: true, requests_deleted: 2 })
    await waitFor(() => s.ended.done, 10_000, 'the server to end the stream')
    assert.equal(s.events.at(-1)!.event, 'endpoint_deleted', 'nothing after the deletion event')
    const again = await get(api(sys, `/endpoints/${ep.endpoint_id}/stream`), { key })
    assert.equal(again.status, 404)
    assert.deepEqual(again.json, { error: 'Endpoint not found' })
    // Another endpoint's stream hears nothing of it and stays open.
    await capture(other.url, { body: 'still here' })
    await nth(bystander, 'capture', 1, 'the other endpoint still streaming')
    assert.deepEqual(bystander.events.map((e) => e.event), ['capture'])
    assert.equal(bystander.ended.done, false)
  })

  it('reaches a stream open on a second API replica: a PATCH, a pause and a deletion made on the first', async () => {
    replica = await startSystem({ services: ['webhooks'], workers: false, env: { MONGO_DB: sys.env.MONGO_DB!, QUEUE_PREFIX: sys.env.QUEUE_PREFIX! } })
    assert.notEqual(replica.root.webhooks, sys.root.webhooks)
    const key = await signup(sys, 'starter')
    const t = await target()
    const ep = await createEndpoint(sys, key, { forward_url: t.url })
    const onB = await listen(replica.root.webhooks, ep.endpoint_id, key)
    const changed = await patch(ep.endpoint_id, { name: 'renamed on A' }, key)
    assert.deepEqual(JSON.parse((await nth(onB, 'endpoint', 1, 'the PATCH on replica B')).data), changed.json)
    await post(api(sys, `/endpoints/${ep.endpoint_id}/forwarding/pause`), undefined, { key })
    assert.equal(JSON.parse((await nth(onB, 'endpoint', 2, 'the pause on replica B')).data).forward_paused, true)
    await call('DELETE', api(sys, `/endpoints/${ep.endpoint_id}`), { key })
    assert.deepEqual(JSON.parse((await nth(onB, 'endpoint_deleted', 1, 'the deletion on replica B')).data), { endpoint_id: ep.endpoint_id, deleted: true, requests_deleted: 0 })
    await waitFor(() => onB.ended.done, 10_000, 'replica B to end its stream')
  })

  it('the listen CLI keeps delivering across a settings event, and stops with a message (exit 1) when the endpoint is deleted', async () => {
    const key = await signup(sys, 'starter')
    const local = await target()
    const ep = await createEndpoint(sys, key, { name: 'cli' })
    const dir = mkdtempSync(join(tmpdir(), 'qw-live-settings-'))
    const child = spawn(process.execPath, [BIN, 'listen', ep.endpoint_id, '--api', sys.root.webhooks, '--forward-to', `${local.url}/dev`], {
      env: { ...process.env, WEBHOOKS_API_KEY: key, QUEUEWORKS_LISTEN_STATE: join(dir, 'state.json'), NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    children.push(child)
    let out = ''
    let err = ''
    child.stdout!.on('data', (b) => (out += b))
    child.stderr!.on('data', (b) => (err += b))
    await waitFor(() => out.includes('Ready.'), 20_000, `the CLI to connect: ${out}${err}`)
    // Both settings events reach the CLI's stream before the capture does (one channel, in order).
    assert.equal((await patch(ep.endpoint_id, { name: 'cli renamed', response_code: 201 }, key)).status, 200)
    const c = await capture(`${ep.url}/after-change`, { body: 'across the settings event' })
    assert.equal(c.status, 201)
    await waitFor(() => local.received.length === 1, 20_000, `the capture at the local target: ${out}${err}`)
    assert.equal(local.received[0]!.url, '/dev/after-change')
    assert.equal(local.received[0]!.body.toString(), 'across the settings event')
    await waitFor(async () => (await get(api(sys, `/endpoints/${ep.endpoint_id}/requests/1`), { key })).json.local_delivery?.status === 202, 10_000, 'the local delivery reported')
    assert.doesNotMatch(out + err, /CONNECTION LOST|error:/, 'the settings event disturbed nothing')

    assert.equal((await call('DELETE', api(sys, `/endpoints/${ep.endpoint_id}`), { key })).status, 200)
    const code = await waitForExit(child)
    assert.equal(code, 1)
    assert.match(err, new RegExp(`error: endpoint ${ep.endpoint_id} was deleted \\(in the console or through the API\\): nothing more will arrive`))
    assert.doesNotMatch(out, /CONNECTION LOST/, 'a deletion is not reported as a lost connection')
  })
})
