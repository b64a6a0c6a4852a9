// Rotating a change webhook's signing secret: the answer shows the new secret once (as creation
// does); from then on deliveries (a retry of an earlier one too) verify with the new secret and not
// the old, checked by a real receiver on 127.0.0.1 the way docs/flags.md tells receivers to (the
// `standardwebhooks` package on the raw body); the rotation is in the history as the secret's hint;
// another account's or an unknown webhook is a 404 and bad input a 400, changing nothing.
import assert from 'node:assert/strict'
import { Webhook } from 'standardwebhooks'
import { assertJsonError, call, get, post } from './helpers/http.ts'
import { flagsAccount, type FlagsAccount } from './helpers/flags.ts'
import { startSystem, type TestSystem } from './helpers/system.ts'
import { startTarget, waitFor, type Received, type Target } from './helpers/webhooks.ts'

/** Whether a received delivery verifies with `secret`, as docs/flags.md's receiver does it. */
function verifiesWith(r: Received, secret: string): boolean {
  try {
    new Webhook(secret).verify(r.body.toString('utf8'), {
      'webhook-id': String(r.headers['webhook-id']),
      'webhook-timestamp': String(r.headers['webhook-timestamp']),
      'webhook-signature': String(r.headers['webhook-signature']),
    })
    return true
  } catch {
    return false
  }
}

describe('flags: rotating a change webhook secret', () => {
  let sys: TestSystem
  const targets: Target[] = []

  before(async () => {
    sys = await startSystem({ services: ['flags'] })
  })
  after(async () => {
    await Promise.all(targets.map((t) => t.close()))
    await sys?.stop()
  })

  /** A receiver that accepts only deliveries signed with the secret it is told (401 otherwise), as a careful receiver does. */
  async function receiver() {
    const state = { secret: '' }
    const rx = await startTarget((r, _i, res) => {
      res.statusCode = verifiesWith(r, state.secret) ? 204 : 401
      res.end()
    })
    targets.push(rx)
    return { rx, state }
  }
  async function hook(t: FlagsAccount, url: string) {
    const r = await post(`${t.project}/webhooks`, { url }, { key: t.apiKey })
    assert.equal(r.status, 201, r.text)
    return r.json as { id: string; secret: string; secret_hint: string }
  }
  const rotate = (t: FlagsAccount, id: string, key = t.apiKey, json?: unknown) => call('POST', `${t.project}/webhooks/${id}/secret/rotate`, { key, json })

  it('answers the new secret once; the next delivery, and a retry of an earlier one, verify with it and not with the old', async () => {
    const t = await flagsAccount(sys)
    const { rx, state } = await receiver()
    const created = await hook(t, `${rx.url}/in`)
    state.secret = created.secret
    await post(`${t.project}/flags`, { key: 'before-rotation' }, { key: t.apiKey })
    await waitFor(() => rx.received.length >= 1, 20_000, 'the first delivery')
    assert.ok(verifiesWith(rx.received[0]!, created.secret))

    const r = await rotate(t, created.id)
    assert.equal(r.status, 200, r.text)
    assert.equal(r.headers.get('cache-control'), 'no-store')
    const rotated = r.json
    assert.deepEqual(Object.keys(rotated).sort(), Object.keys(created).sort(), 'the same shape as the creation answer')
    assert.match(rotated.secret, /^whsec_[A-Za-z0-9+/]{43}=$/)
    assert.notEqual(rotated.secret, created.secret)
    assert.equal(rotated.secret_hint, `${rotated.secret.slice(0, 10)}…`)
    assert.notEqual(rotated.secret_hint, created.secret_hint)
    const shown = await get(`${t.project}/webhooks/${created.id}`, { key: t.apiKey })
    assert.equal(shown.json.secret, undefined, 'shown once: never again')
    assert.equal(shown.json.secret_hint, rotated.secret_hint)

    // The receiver switches to the new secret; the next change is signed with it only.
    state.secret = rotated.secret
    await post(`${t.project}/flags`, { key: 'after-rotation' }, { key: t.apiKey })
    await waitFor(() => rx.received.length >= 2, 20_000, 'the delivery after the rotation')
    const next = rx.received[1]!
    assert.equal(JSON.parse(next.body.toString('utf8')).data.key, 'after-rotation')
    assert.ok(verifiesWith(next, rotated.secret), 'verifies with the new secret')
    assert.ok(!verifiesWith(next, created.secret), 'and not with the old')
    const deliveries = (await get(`${t.project}/webhooks/${created.id}/deliveries`, { key: t.apiKey })).json.deliveries
    await waitFor(async () => (await get(`${t.project}/webhooks/${created.id}/deliveries`, { key: t.apiKey })).json.deliveries.every((d: any) => d.state === 'delivered'), 20_000, 'both delivered')

    // A delivery made before the rotation, sent again, is signed with the new secret too.
    const first = deliveries.find((d: any) => d.type === 'flag.created' && d.change_id === JSON.parse(rx.received[0]!.body.toString('utf8')).data.change_id)
    assert.equal((await post(`${t.project}/webhooks/${created.id}/deliveries/${first.id}/retry`, {}, { key: t.apiKey })).status, 202)
    await waitFor(() => rx.received.length >= 3, 20_000, 'the retry')
    assert.equal(rx.received[2]!.headers['webhook-id'], rx.received[0]!.headers['webhook-id'])
    assert.ok(verifiesWith(rx.received[2]!, rotated.secret))
    assert.ok(!verifiesWith(rx.received[2]!, created.secret))
  })

  it('records the rotation in the history as a change of the secret hint (never the secret)', async () => {
    const t = await flagsAccount(sys)
    const created = await hook(t, 'http://127.0.0.1:9/hook')
    const rotated = (await rotate(t, created.id)).json
    const feed = (await get(`${t.project}/history?kind=webhook`, { key: t.apiKey })).json.history
    assert.deepEqual(feed.map((e: any) => e.type), ['webhook.updated', 'webhook.created'])
    assert.equal(feed[0].target, created.id)
    assert.deepEqual(feed[0].changes, [{ op: 'replace', path: '/secret_hint', value: rotated.secret_hint }])
    assert.equal(feed[0].before.secret_hint, created.secret_hint)
    assert.ok(!JSON.stringify(feed).includes(rotated.secret) && !JSON.stringify(feed).includes(created.secret), 'no secret in the history')
  })

  it("another account's or an unknown webhook is a 404; bad input is a 400; neither changes the secret", async () => {
    const t = await flagsAccount(sys)
    const other = await flagsAccount(sys)
    const created = await hook(t, 'http://127.0.0.1:9/hook')
    const theirs = await hook(other, 'http://127.0.0.1:9/theirs')

    assertJsonError(await rotate(t, 'nope'), 404, 'Webhook not found')
    // Their webhook through my project, and my project with their key: both look like nothing there.
    assertJsonError(await rotate(t, theirs.id), 404, 'Webhook not found')
    assertJsonError(await rotate(t, created.id, other.apiKey), 404, 'Project not found')
    assertJsonError(await call('POST', `${t.project}/webhooks/${created.id}/secret/rotate`, {}), 401)

    assertJsonError(await rotate(t, created.id, t.apiKey, { secret: 'whsec_mine' }), 400)
    assertJsonError(await call('POST', `${t.project}/webhooks/${created.id}/secret/rotate`, { raw: '{"x":', key: t.apiKey }), 400)
    assertJsonError(await rotate(t, 'w'.repeat(65)), 400)

    const mine = await get(`${t.project}/webhooks/${created.id}`, { key: t.apiKey })
    assert.equal(mine.json.secret_hint, created.secret_hint)
    const their = await get(`${other.project}/webhooks/${theirs.id}`, { key: other.apiKey })
    assert.equal(their.json.secret_hint, theirs.secret_hint)
    const feed = (await get(`${t.project}/history?kind=webhook`, { key: t.apiKey })).json.history
    assert.deepEqual(feed.map((e: any) => e.type), ['webhook.created'])
  })

  it('/openapi.json lists the rotation', async () => {
    const doc = (await get(`${sys.root.flags}/openapi.json`)).json
    const op = doc.paths['/api/v1/projects/{id}/webhooks/{webhook}/secret/rotate']?.post
    assert.ok(op, 'listed')
    assert.match(op.summary, /signing secret/)
  })
})
