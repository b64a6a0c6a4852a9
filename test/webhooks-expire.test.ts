import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { capturesExpireJob } from '../jobs/captures-expire.ts'
import { clock } from '../src/platform/clock.ts'
import { captures } from '../src/webhooks/store/capture-store.ts'
import { findAccountByKey, setPlan } from '../src/platform/accounts.ts'
import { enqueue } from '../src/platform/queue/job.ts'
import { QueueName } from './helpers/queue-names.ts'
import { queuesIdle, startSystem, type TestSystem } from './helpers/system.ts'
import { get, post } from './helpers/http.ts'
import { api, capture, createEndpoint, signup } from './helpers/webhooks.ts'

describe('webhooks: retention (captures-expire job, injected clock)', () => {
  let sys: TestSystem
  let runs = 0
  before(async () => {
    sys = await startSystem({ services: ['webhooks'], workers: { queues: [QueueName.CapturesExpire] } })
    await sys.platform.queues.listen(QueueName.CapturesExpire)
    await queuesIdle(sys, [QueueName.CapturesExpire])
  })
  after(async () => {
    clock.reset()
    await sys?.stop()
  })

  /** Run the job through its real queue and worker; resolve with its report. */
  async function runExpire(): Promise<any> {
    const id = `expire-test-${++runs}`
    const settled = sys.platform.queues.nextSettled(QueueName.CapturesExpire, id, 20_000)
    await enqueue(sys.platform, capturesExpireJob, { batch: 2 }, { jobId: id })
    const s = await settled
    assert.equal(s?.event, 'completed', JSON.stringify(s))
    return (s as any).returnvalue
  }
  // webhook_captures is partitioned: counted over its slots.
  const count = (c: string, q: object = {}) => (c === 'webhook_captures' ? captures(sys.platform.db).countDocuments(q) : sys.platform.db.collection(c).countDocuments(q))

  it('is scheduled when its worker starts', async () => {
    const schedulers = await sys.platform.queues.queue(QueueName.CapturesExpire).getJobSchedulers()
    assert.ok(schedulers.some((s) => s.key === 'captures-expire'))
  })

  it("deletes captures past their plan's retention, then expired free endpoints with their captures, in batches", async () => {
    const t0 = new Date('2026-11-21T09:00:00.000Z')
    clock.setNow(t0)
    const free = await signup(sys)
    const paid = await signup(sys, 'starter')
    const fe = await createEndpoint(sys, free)
    const pe = await createEndpoint(sys, paid)
    for (let i = 0; i < 3; i++) await capture(fe.url, { body: `f${i}` })
    await capture(fe.url, { body: randomBytes(2 * 1024 * 1024) }) // stored in GridFS
    await capture(pe.url, { body: 'p' })
    assert.equal(await count('capture_bodies.files'), 1)

    clock.setNow(new Date(t0.getTime() + 23 * 3_600_000))
    assert.equal((await runExpire()).captures, 0)

    clock.setNow(new Date(t0.getTime() + 25 * 3_600_000))
    const r1 = await runExpire()
    assert.equal(r1.captures, 4) // free retention: 24 h, deleted 2 per batch
    assert.equal(await count('webhook_captures', { endpoint_id: fe.endpoint_id }), 0)
    assert.equal(await count('capture_bodies.files'), 0)
    assert.equal(await count('capture_bodies.chunks'), 0)
    assert.equal(await count('webhook_captures', { endpoint_id: pe.endpoint_id }), 1) // starter: 168 h
    assert.equal((await get(api(sys, `/endpoints/${fe.endpoint_id}`), { key: free })).status, 200)

    await capture(fe.url, { body: 'late' })
    clock.setNow(new Date(t0.getTime() + 7 * 86_400_000 + 60_000))
    const r2 = await runExpire()
    assert.equal(r2.endpoints, 1)
    assert.equal(await count('webhook_endpoints', { _id: fe.endpoint_id }), 0)
    assert.equal(await count('webhook_captures', { endpoint_id: fe.endpoint_id }), 0)
    assert.equal(await count('webhook_captures', { endpoint_id: pe.endpoint_id }), 0) // 168 h passed too
    assert.equal(await count('webhook_endpoints', { _id: pe.endpoint_id }), 1) // paid endpoints do not expire
    // The expired endpoint's slot is free again: two new endpoints fit the free plan.
    assert.equal((await post(api(sys, '/endpoints'), {}, { key: free })).status, 201)
    assert.equal((await post(api(sys, '/endpoints'), {}, { key: free })).status, 201)

    assert.deepEqual(await runExpire(), { captures: 0, endpoints: 0, replays: 0, counters: 0 })
  })

  it('an endpoint of an account that upgraded does not expire', async () => {
    const t0 = new Date('2026-12-01T00:00:00.000Z')
    clock.setNow(t0)
    const key = await signup(sys)
    const ep = await createEndpoint(sys, key)
    const acc = await findAccountByKey(sys.platform.db, 'webhooks', key)
    await setPlan(sys.platform.db, acc!._id, 'pro')
    clock.setNow(new Date(t0.getTime() + 8 * 86_400_000))
    await runExpire()
    assert.equal(await count('webhook_endpoints', { _id: ep.endpoint_id }), 1)
    assert.equal((await capture(ep.url)).status, 200)
    assert.equal((await get(api(sys, `/endpoints/${ep.endpoint_id}`), { key })).json.expires_at, null)
  })
})
