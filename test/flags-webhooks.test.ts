// Flag-change webhooks end to end: real workers, real HTTP receivers on 127.0.0.1 that verify every
// Standard Webhooks signature with the `standardwebhooks` package. Each event type with its
// before/after state, retries recorded in the delivery log, manual retry, per-environment routing,
// CRUD with the secret shown once and sealed at rest, tenant isolation, the plan limit, URL rules
// (private addresses refused when private targets are not allowed) and bad input.
import assert from 'node:assert/strict'
import { Webhook } from 'standardwebhooks'
import { commitEntry, getEntry, insertPending } from '../src/flags/changes/history-store.ts'
import { sweepHistory } from '../src/flags/changes/history-sweep.ts'
import { assertJsonError, call, get, post } from './helpers/http.ts'
import { flagsAccount, type FlagsAccount } from './helpers/flags.ts'
import { startSystem, type TestSystem } from './helpers/system.ts'
import { startTarget, waitFor, type Received, type Target } from './helpers/webhooks.ts'

const put = (url: string, json: unknown, key: string) => call('PUT', url, { json, key })
const patch = (url: string, json: unknown, key: string) => call('PATCH', url, { json, key })
const del = (url: string, key: string) => call('DELETE', url, { key })

/** The event a receiver got, after checking its signature with the webhook's secret. */
function verified(r: Received, secret: string): any {
  const headers = { 'webhook-id': String(r.headers['webhook-id']), 'webhook-timestamp': String(r.headers['webhook-timestamp']), 'webhook-signature': String(r.headers['webhook-signature']) }
  return new Webhook(secret).verify(r.body.toString('utf8'), headers)
}

describe('flags: change webhooks', () => {
  let sys: TestSystem
  const targets: Target[] = []
  const target = async (...a: Parameters<typeof startTarget>) => {
    const t = await startTarget(...a)
    targets.push(t)
    return t
  }

  before(async () => {
    sys = await startSystem({ services: ['flags'] })
  })
  after(async () => {
    await Promise.all(targets.map((t) => t.close()))
    await sys?.stop()
  })

  async function hook(t: FlagsAccount, body: Record<string, unknown>) {
    const r = await post(`${t.project}/webhooks`, body, { key: t.apiKey })
    assert.equal(r.status, 201, r.text)
    return r.json as { id: string; secret: string; url: string }
  }

  it('sends every flag and segment event, signed, with the state before and after', async () => {
    const t = await flagsAccount(sys)
    const rx = await target()
    const h = await hook(t, { url: `${rx.url}/flags?x=1` })
    assert.match(h.secret, /^whsec_[A-Za-z0-9+/]{43}=$/)

    await post(`${t.project}/flags`, { key: 'dark-mode', default_value: 'off' }, { key: t.apiKey })
    await put(`${t.project}/flags/dark-mode`, { enabled: true }, t.apiKey)
    await del(`${t.project}/flags/dark-mode`, t.apiKey)
    const conditions = [{ attribute: 'email', operator: 'ends_with', value: '@beta.example' }]
    await post(`${t.project}/segments`, { name: 'beta', conditions }, { key: t.apiKey })
    await put(`${t.project}/segments/beta`, { description: 'Beta' }, t.apiKey)
    await del(`${t.project}/segments/beta`, t.apiKey)

    await waitFor(() => rx.received.length >= 6, 20_000, 'six events')
    const events = rx.received.map((r) => {
      assert.equal(r.url, '/flags?x=1')
      assert.equal(r.headers['user-agent'], 'queueworks-flags-webhook/1')
      return verified(r, h.secret)
    })
    // Deliveries run in parallel: order by the change id (time-ordered).
    events.sort((a, b) => (a.data.change_id < b.data.change_id ? -1 : 1))
    assert.deepEqual(events.map((e) => e.type), ['flag.created', 'flag.updated', 'flag.deleted', 'segment.created', 'segment.updated', 'segment.deleted'])
    const [created, updated, deleted, sCreated, sUpdated, sDeleted] = events
    assert.equal(created.data.key, 'dark-mode')
    assert.equal(created.data.project_id, t.projectId)
    assert.equal(created.data.before, null)
    assert.deepEqual(created.data.after, { key: 'dark-mode', name: 'dark-mode', environments: { production: { enabled: false, default_value: 'off', rules: [] } } })
    assert.equal(updated.data.environment, 'production')
    assert.equal(updated.data.before.environments.production.enabled, false)
    assert.equal(updated.data.after.environments.production.enabled, true)
    assert.deepEqual(updated.data.changes, [{ op: 'replace', path: '/environments/production/enabled', value: true }])
    assert.deepEqual(deleted.data.before, updated.data.after)
    assert.equal(deleted.data.after, null)
    assert.deepEqual(sCreated.data.after, { name: 'beta', description: '', conditions })
    assert.equal(sCreated.data.name, 'beta')
    assert.deepEqual(sUpdated.data.changes, [{ op: 'replace', path: '/description', value: 'Beta' }])
    assert.equal(sDeleted.data.after, null)
    assert.equal(created.data.actor.account_id, t.accountId)
    // The message id is the change's: the same in the header and the history.
    assert.equal(rx.received.find((r) => verified(r, h.secret).data.change_id === created.data.change_id)!.headers['webhook-id'], `msg_${created.data.change_id}`)
    const hist = await get(`${t.project}/flags/dark-mode/history`, { key: t.apiKey })
    assert.deepEqual(hist.json.history.map((e: any) => e.id), [deleted.data.change_id, updated.data.change_id, created.data.change_id])
    // A wrong secret does not verify.
    assert.throws(() => verified(rx.received[0]!, `whsec_${Buffer.alloc(32, 1).toString('base64')}`))
  })

  it('a receiver that fails twice then succeeds: three attempts in the delivery log', async () => {
    const t = await flagsAccount(sys)
    const rx = await target((_r, i, res) => {
      res.statusCode = i < 2 ? 503 : 200
      res.end(i < 2 ? `busy ${i}` : 'thanks ✓')
    })
    const h = await hook(t, { url: rx.url })
    await post(`${t.project}/flags`, { key: 'retry-me' }, { key: t.apiKey })
    const log = `${t.project}/webhooks/${h.id}/deliveries`
    const d = await waitFor(async () => {
      const r = await get(log, { key: t.apiKey })
      return r.json.deliveries[0]?.state === 'delivered' && r.json.deliveries[0]
    }, 30_000, 'delivered')
    assert.equal(d.attempt_count, 3)
    assert.equal(d.last_status, 200)
    assert.equal(d.type, 'flag.created')
    const one = await get(`${log}/${d.id}`, { key: t.apiKey })
    assert.equal(one.status, 200)
    assert.deepEqual(one.json.attempts.map((a: any) => [a.status, a.response_excerpt, a.manual]), [[503, 'busy 0', false], [503, 'busy 1', false], [200, 'thanks ✓', false]])
    assert.deepEqual(one.json.attempts.map((a: any) => a.error), ['receiver answered 503', 'receiver answered 503', null])
    for (const a of one.json.attempts) assert.ok(Number.isInteger(a.latency_ms) && a.latency_ms >= 0)
    assert.equal(rx.received.length, 3)
    // Every attempt is the same message (same id), each signed afresh.
    assert.equal(new Set(rx.received.map((r) => r.headers['webhook-id'])).size, 1)
    for (const r of rx.received) assert.equal(verified(r, h.secret).type, 'flag.created')
  })

  it('manual retry: re-sends a finished delivery; 409 while one is still being attempted', async () => {
    const t = await flagsAccount(sys)
    let fail = false
    const rx = await target((_r, _i, res) => {
      res.statusCode = fail ? 500 : 204
      res.end()
    })
    const h = await hook(t, { url: rx.url })
    await post(`${t.project}/flags`, { key: 'again' }, { key: t.apiKey })
    const log = `${t.project}/webhooks/${h.id}/deliveries`
    const d = await waitFor(async () => (await get(log, { key: t.apiKey })).json.deliveries.find((x: any) => x.state === 'delivered'), 20_000, 'delivered')
    const r = await post(`${log}/${d.id}/retry`, undefined, { key: t.apiKey })
    assert.equal(r.status, 202, r.text)
    assert.equal(r.json.state, 'pending')
    const again = await waitFor(async () => {
      const x = await get(`${log}/${d.id}`, { key: t.apiKey })
      return x.json.attempts.length === 2 && x.json.state === 'delivered' && x.json
    }, 20_000, 'second attempt')
    assert.deepEqual(again.attempts.map((a: any) => [a.status, a.manual]), [[204, false], [204, true]])
    assert.equal(rx.received.length, 2)
    assert.equal(rx.received[0]!.headers['webhook-id'], rx.received[1]!.headers['webhook-id'])

    // A delivery that keeps failing is still pending (backing off): retrying it now is a 409.
    fail = true
    await put(`${t.project}/flags/again`, { name: 'Again' }, t.apiKey)
    const failing = await waitFor(async () => (await get(log, { key: t.apiKey })).json.deliveries.find((x: any) => x.type === 'flag.updated' && x.attempt_count >= 1), 20_000, 'failed attempt')
    assert.equal(failing.state, 'pending')
    assertJsonError(await post(`${log}/${failing.id}/retry`, undefined, { key: t.apiKey }), 409, 'This delivery is still being attempted; retry it once it has failed or been delivered')
    assertJsonError(await post(`${log}/nope/retry`, undefined, { key: t.apiKey }), 404, 'Delivery not found')
    // Deleting the webhook ends its deliveries.
    assert.equal((await del(`${t.project}/webhooks/${h.id}`, t.apiKey)).status, 204)
    assertJsonError(await get(log, { key: t.apiKey }), 404, 'Webhook not found')
  })

  it('routes per environment: an environment\'s own changes to its webhooks, shared changes to all', async () => {
    const t = await flagsAccount(sys, 'pro')
    assert.equal((await post(`${t.project}/environments`, { name: 'staging' }, { key: t.apiKey })).status, 201)
    const prod = await target()
    const staging = await target()
    const hp = await hook(t, { url: prod.url })
    const hs = await hook(t, { url: staging.url, environment: 'staging' })
    const types = (rx: Target, secret: string) => rx.received.map((r) => verified(r, secret)).map((e) => `${e.type}@${e.data.environment}`).sort()

    await post(`${t.project}/flags`, { key: 'f' }, { key: t.apiKey }) // shared: both
    await waitFor(() => prod.received.length === 1 && staging.received.length === 1, 20_000, 'create to both')
    await put(`${t.project}/flags/f?environment=staging`, { enabled: true }, t.apiKey) // staging only
    await waitFor(() => staging.received.length === 2, 20_000, 'staging change')
    await put(`${t.project}/flags/f`, { rules: [{ conditions: [{ attribute: 'a', operator: 'eq', value: 'b' }], value: 'false' }] }, t.apiKey) // production only
    await waitFor(() => prod.received.length === 2, 20_000, 'production change')
    await put(`${t.project}/flags/f`, { name: 'F' }, t.apiKey) // shared
    await waitFor(() => prod.received.length === 3 && staging.received.length === 3, 20_000, 'rename to both')
    assert.deepEqual(types(prod, hp.secret), ['flag.created@null', 'flag.updated@null', 'flag.updated@production'])
    assert.deepEqual(types(staging, hs.secret), ['flag.created@null', 'flag.updated@null', 'flag.updated@staging'])
    const stagingChange = staging.received.map((r) => verified(r, hs.secret)).find((e) => e.data.environment === 'staging')
    assert.deepEqual(stagingChange.data.changes, [{ op: 'replace', path: '/environments/staging/enabled', value: true }])
  })

  it('a committed change whose dispatch was lost (Redis down, process died) is dispatched by the history sweep', async () => {
    const t = await flagsAccount(sys)
    const rx = await target()
    const h = await hook(t, { url: rx.url })
    const db = sys.platform.db
    const actor = { account_id: t.accountId, api_key: { id: '0'.repeat(16), hint: 'fb_test…' } }
    const e = await insertPending(db, { project_id: t.projectId, account_id: t.accountId, kind: 'segment', target: 'lost', actor, before: null })
    const after = { name: 'lost', description: '', conditions: [] }
    await commitEntry(db, e, { type: 'segment.created', environment: null, after, changes: [], dispatch: 'pending' })
    // The worker's scheduled sweep may get there first (it runs every minute): either sweep sends it.
    // Swept again while nothing has arrived (a loaded CI machine saw a first sweep send nothing
    // within 20 s): a sweep redispatches only while the entry is still undispatched, and a
    // dispatch's deliveries have fixed ids, so sweeping again cannot deliver twice (checked below).
    assert.ok((await sweepHistory(sys.platform, 0)).redispatched <= 1)
    let swept = Date.now()
    await waitFor(
      async () => {
        if (rx.received.length === 0 && Date.now() - swept > 3_000 && (await getEntry(db, t.projectId, e._id))?.dispatch === 'pending') {
          swept = Date.now()
          await sweepHistory(sys.platform, 0)
        }
        return rx.received.length === 1
      },
      40_000,
      'the lost event',
    )
    const ev = verified(rx.received[0]!, h.secret)
    assert.equal(ev.data.change_id, e._id)
    assert.deepEqual(ev.data.after, after)
    await waitFor(async () => (await getEntry(db, t.projectId, e._id))?.dispatch === 'done', 20_000, 'marked dispatched')
    assert.equal((await sweepHistory(sys.platform, 0)).redispatched, 0, 'dispatched once')
    assert.equal(rx.received.length, 1, 'one delivery')
  })

  it('event filter: a webhook gets only the types it listens for; a disabled one gets none', async () => {
    const t = await flagsAccount(sys, 'starter')
    const segOnly = await target()
    const off = await target()
    const all = await target()
    const hSeg = await hook(t, { url: segOnly.url, events: ['segment.created'] })
    await hook(t, { url: off.url, enabled: false })
    const hAll = await hook(t, { url: all.url })
    await post(`${t.project}/flags`, { key: 'x' }, { key: t.apiKey })
    await post(`${t.project}/segments`, { name: 's', conditions: [{ attribute: 'a', operator: 'eq', value: 'b' }] }, { key: t.apiKey })
    await waitFor(() => all.received.length === 2 && segOnly.received.length === 1, 20_000, 'deliveries')
    assert.equal(verified(segOnly.received[0]!, hSeg.secret).type, 'segment.created')
    assert.equal(all.received.map((r) => verified(r, hAll.secret).type).sort().join(), 'flag.created,segment.created')
    assert.equal(off.received.length, 0)
  })

  it('CRUD: the secret is shown once and sealed at rest; another account gets 404; the plan limit is a 403', async () => {
    const t = await flagsAccount(sys)
    const other = await flagsAccount(sys)
    const h = await hook(t, { url: 'https://example.com/hooks/flags', description: 'Ops — 運用', events: ['flag.updated'] })
    assert.deepEqual(Object.keys(h).sort(), ['created_at', 'description', 'enabled', 'environment', 'events', 'id', 'secret', 'secret_hint', 'updated_at', 'url'])
    const list = await get(`${t.project}/webhooks`, { key: t.apiKey })
    assert.equal(list.json.webhooks.length, 1)
    assert.equal(list.json.webhooks[0].secret, undefined)
    assert.equal(list.json.webhooks[0].description, 'Ops — 運用')
    assert.equal(list.json.webhooks[0].secret_hint, `${h.secret.slice(0, 10)}…`)
    const stored = await sys.platform.db.collection('flag_webhooks').findOne({ _id: h.id as any })
    assert.ok(stored)
    assert.ok(!JSON.stringify(stored).includes(h.secret.slice(6)), 'the secret is not stored in the clear')
    assert.match(String(stored!.secret_sealed), /^v1\.db\./)

    const u = await patch(`${t.project}/webhooks/${h.id}`, { enabled: false, events: null }, t.apiKey)
    assert.equal(u.status, 200, u.text)
    assert.equal(u.json.enabled, false)
    assert.equal(u.json.events, null)
    assert.equal(u.json.secret, undefined)

    for (const [m, path] of [['GET', ''], ['PATCH', ''], ['DELETE', ''], ['GET', '/deliveries']] as const) {
      const r = await call(m, `${t.project}/webhooks/${h.id}${path}`, { key: other.apiKey, json: m === 'PATCH' ? { enabled: true } : undefined })
      assertJsonError(r, 404, 'Project not found')
    }
    assertJsonError(await get(`${other.project}/webhooks/${h.id}`, { key: other.apiKey }), 404, 'Webhook not found')
    await hook(t, { url: 'https://example.com/2' })
    const over = await post(`${t.project}/webhooks`, { url: 'https://example.com/3' }, { key: t.apiKey })
    assertJsonError(over, 403, 'Plan limit reached: the free plan allows 2 webhooks per project')
    assert.equal(over.json.limit, 'webhooks_per_project')
    assert.equal((await del(`${t.project}/webhooks/${h.id}`, t.apiKey)).status, 204)
    assertJsonError(await del(`${t.project}/webhooks/${h.id}`, t.apiKey), 404, 'Webhook not found')
    assert.equal((await post(`${t.project}/webhooks`, { url: 'https://example.com/3' }, { key: t.apiKey })).status, 201, 'deleting frees the slot')
  })

  it('bad input is a 400 naming the field, and nothing is stored', async () => {
    const t = await flagsAccount(sys, 'pro')
    const hooks = `${t.project}/webhooks`
    const cases: [unknown, string | RegExp][] = [
      [{}, 'url is required'],
      [{ url: 5 }, 'url must be a string'],
      [{ url: '' }, 'url must not be empty'],
      [{ url: `https://example.com/${'a'.repeat(3000)}` }, 'url must be at most 2048 characters'],
      [{ url: 'ftp://example.com/x' }, 'url must use http or https'],
      [{ url: 'not a url' }, 'url is not valid'],
      [{ url: 'https://user:pw@example.com/' }, 'url must not contain credentials'],
      [{ url: 'https://example.com', environment: 'nope' }, 'environment is not an environment of this project ("nope")'],
      [{ url: 'https://example.com', environment: 7 }, 'environment must be a string'],
      [{ url: 'https://example.com', events: [] }, 'events must have at least 1 item'],
      [{ url: 'https://example.com', events: ['flag.exploded'] }, /^events\[0\] must be one of: flag.created/],
      [{ url: 'https://example.com', events: 'flag.created' }, 'events must be an array'],
      [{ url: 'https://example.com', enabled: 'yes' }, 'enabled must be a boolean'],
      [{ url: 'https://example.com', description: 'ü'.repeat(201) }, 'description must be at most 200 characters'],
      [{ url: 'https://example.com', secret: 'mine' }, 'body has unknown field: secret'],
      [[], /^body must be an object/],
    ]
    for (const [body, message] of cases) assertJsonError(await post(hooks, body, { key: t.apiKey }), 400, message)
    assertJsonError(await call('POST', hooks, { raw: '{"url": "https://example.com"', key: t.apiKey }), 400)
    assertJsonError(await call('POST', hooks, { raw: '', key: t.apiKey }), 400, 'url is required')
    const h = await hook(t, { url: 'https://example.com/ok' })
    assertJsonError(await patch(`${hooks}/${h.id}`, {}, t.apiKey), 400, 'body must name at least one of: url, environment, events, description, enabled')
    assertJsonError(await patch(`${hooks}/${h.id}`, { url: 'javascript:alert(1)' }, t.apiKey), 400, 'url must use http or https')
    assertJsonError(await patch(`${hooks}/${h.id}`, { environment: 'nope' }, t.apiKey), 400, 'environment is not an environment of this project ("nope")')
    assertJsonError(await get(`${hooks}/${h.id}/deliveries?limit=0`, { key: t.apiKey }), 400, 'limit must be >= 1')
    assertJsonError(await get(`${hooks}/${h.id}/deliveries?before=%00`, { key: t.apiKey }), 400, 'before must be a next_before value from a previous page')
    const list = await get(hooks, { key: t.apiKey })
    assert.deepEqual(list.json.webhooks.map((w: any) => [w.url, w.environment]), [['https://example.com/ok', 'production']])
    const feed = await get(`${t.project}/history?kind=webhook`, { key: t.apiKey })
    assert.deepEqual(feed.json.history.map((e: any) => e.type), ['webhook.created'])
  })
})

describe('flags: change webhooks when private targets are not allowed (the production default)', () => {
  let sys: TestSystem
  before(async () => {
    sys = await startSystem({ services: ['flags'], env: { OUTBOUND_ALLOW_PRIVATE: 'false' } })
  })
  after(async () => {
    await sys?.stop()
  })

  it('refuses loopback, private, link-local and localhost URLs with a 400; public ones are accepted', async () => {
    const t = await flagsAccount(sys)
    for (const url of ['http://127.0.0.1:8080/x', 'http://10.0.0.7/', 'http://192.168.1.1/', 'http://169.254.169.254/latest/meta-data', 'http://[::1]/', 'http://localhost:3000/', 'http://api.localhost/']) {
      assertJsonError(await post(`${t.project}/webhooks`, { url }, { key: t.apiKey }), 400, 'url must point to a public address')
    }
    assert.deepEqual((await get(`${t.project}/webhooks`, { key: t.apiKey })).json.webhooks, [])
    const ok = await post(`${t.project}/webhooks`, { url: 'https://hooks.example.com/flags' }, { key: t.apiKey })
    assert.equal(ok.status, 201, ok.text)
    assertJsonError(await call('PATCH', `${t.project}/webhooks/${ok.json.id}`, { json: { url: 'http://127.0.0.1/' }, key: t.apiKey }), 400, 'url must point to a public address')
  })

  it('checks the address again at delivery: a stored URL that now points inside fails at once, and a manual retry fails the same way', async () => {
    const t = await flagsAccount(sys)
    const rx = await startTarget()
    try {
      const h = await post(`${t.project}/webhooks`, { url: 'https://hooks.example.com/flags' }, { key: t.apiKey })
      // As if the URL had been accepted when private targets were allowed (or a name now resolves inside).
      await sys.platform.db.collection('flag_webhooks').updateOne({ _id: h.json.id }, { $set: { url: `${rx.url}/inside` } })
      await post(`${t.project}/flags`, { key: 'blocked' }, { key: t.apiKey })
      const log = `${t.project}/webhooks/${h.json.id}/deliveries`
      const d = await waitFor(async () => (await get(log, { key: t.apiKey })).json.deliveries.find((x: any) => x.state === 'failed'), 20_000, 'failed delivery')
      assert.equal(d.attempt_count, 1, 'no retries for a refused address')
      const one = (await get(`${log}/${d.id}`, { key: t.apiKey })).json
      assert.equal(one.attempts[0].status, null)
      assert.equal(one.attempts[0].error, 'address 127.0.0.1 is not allowed')
      const r = await post(`${log}/${d.id}/retry`, undefined, { key: t.apiKey })
      assert.equal(r.status, 202, r.text)
      const again = await waitFor(async () => {
        const x = (await get(`${log}/${d.id}`, { key: t.apiKey })).json
        return x.state === 'failed' && x.attempts.length === 2 && x
      }, 20_000, 'manual retry failed')
      assert.deepEqual(again.attempts.map((a: any) => a.manual), [false, true])
      assert.equal(rx.received.length, 0, 'nothing reached the private address')
    } finally {
      await rx.close()
    }
  })
})
