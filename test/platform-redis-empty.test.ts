// Redis killed (-9) and started again empty, under a running system (same process, same
// workers, no restart): the workers re-create their job schedulers, and everything accepted —
// a forward retry that was waiting in Redis, and a batch and a capture accepted while Redis was
// down — is re-enqueued from MongoDB and completes.
import assert from 'node:assert/strict'
import { startRedisServer, type EmbeddedRedis } from '../src/platform/embedded/redis-server.ts'
import { outboxSweepContract } from '../src/platform/outbox.ts'
import { startSystem, type TestSystem } from './helpers/system.ts'
import { get } from './helpers/http.ts'
import { account, rows, submit, waitFinished } from './helpers/invoice-batch.ts'
import { capture, createEndpoint, signup, startTarget, waitFor, type Target } from './helpers/webhooks.ts'

describe('platform: Redis comes back empty', () => {
  let redis: EmbeddedRedis
  let sys: TestSystem
  let target: Target
  before(async () => {
    redis = await startRedisServer({ appendonly: false })
    // The first forward attempt fails; the retry waits 20 s as a delayed job, in Redis only.
    sys = await startSystem({ services: ['invoice', 'webhooks'], env: { REDIS_URL: redis.url, WEBHOOK_FORWARD_SCHEDULE_MS: '0,20000' } })
    target = await startTarget((r, _i, res) => {
      res.statusCode = r.body.toString() === 'before' && target.received.filter((x) => x.body.toString() === 'before').length === 1 ? 500 : 200
      res.end()
    })
  })
  after(async () => {
    await target?.close()
    await sys?.stop()
    await redis?.child.stop()
  })

  it('re-creates the schedulers and completes the waiting retry, the batch and the capture accepted while Redis was down', async function () {
    this.timeout(200_000)
    const { key: invoiceKey } = await account(sys, 'starter')
    const hookKey = await signup(sys, 'starter')
    const ep = await createEndpoint(sys, hookKey, { forward_url: target.url })
    const request = async (id: number) => (await get(`${sys.url.webhooks}/api/v1/endpoints/${ep.endpoint_id}/requests/${id}`, { key: hookKey })).json

    assert.equal((await capture(ep.url, { body: 'before' })).status, 200)
    await waitFor(async () => (await request(1)).forward?.status === 'retrying', 30_000, 'the first attempt to fail')

    redis.child.kill()
    await new Promise((r) => redis.child.proc.once('exit', r))
    const during = await capture(ep.url, { body: 'during' })
    assert.equal(during.status, 200, during.text)
    const batch = await submit(sys, invoiceKey, rows(30))
    assert.equal(batch.status, 202, batch.text)

    redis = await startRedisServer({ port: redis.port, appendonly: false })
    const started = Date.now()
    const queue = sys.platform.queues.queue(outboxSweepContract.queue)
    await waitFor(async () => Boolean(await queue.getJobScheduler('outbox-sweep').catch(() => null)), 60_000, 'the schedulers to be re-created')
    await waitFor(async () => (await get(`${sys.root.invoice}/readyz`)).status === 200, 30_000, 'readiness')

    const st = await waitFinished(sys, invoiceKey, batch.json.batch_id, 120_000)
    assert.equal(st.counts.done, 30)
    await waitFor(async () => (await request(1)).forward?.status === 'delivered' && (await request(2)).forward?.status === 'delivered', 120_000, 'both forwards')
    const elapsed = Date.now() - started
    if (process.env.DEBUG_FAILOVER) console.log(`      everything done ${elapsed} ms after Redis came back`)
    assert.ok(elapsed <= 120_000)
    assert.equal(target.received.filter((r) => r.body.toString() === 'during').length, 1)
  })
})
