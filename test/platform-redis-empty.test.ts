// Redis killed (-9) and started again empty, under a running system (same process, same
// workers, no restart): the workers re-create their job schedulers, and everything accepted —
// a forward retry that was waiting in Redis, and a batch and a capture accepted while Redis was
// down — is re-enqueued from MongoDB and completes.
import assert from 'node:assert/strict'
import { startRedisServer, type EmbeddedRedis } from '../src/embedded/redis-server.ts'
import { freePort } from './helpers/ports.ts'
import { outboxSweepContract } from '../src/platform/queue/outbox.ts'
import { spawnWorker, startSystem, waitForExit, type TestSystem } from './helpers/system.ts'
import { get, post } from './helpers/http.ts'
import { getInvoice, invoiceSlots } from '../src/invoice/store/invoice-store.ts'
import { JOBS } from '../jobs/index.ts'
import { startWorkers } from '../workers/main.ts'
import { QueueName } from './helpers/queue-names.ts'
import { account, rows, submit, waitFinished } from './helpers/invoice-batch.ts'
import { capture, createEndpoint, signup, startTarget, waitFor, type Target } from './helpers/webhooks.ts'

describe('platform: Redis comes back empty', () => {
  let redis: EmbeddedRedis
  let sys: TestSystem
  let target: Target
  before(async () => {
    redis = await startRedisServer({ port: await freePort(), appendonly: false })
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

describe('platform: Redis comes back empty under a waiting invoice and a rendering batch', function () {
  this.timeout(300_000)
  let redis: EmbeddedRedis
  let sys: TestSystem
  before(async () => {
    redis = await startRedisServer({ port: await freePort(), appendonly: false })
    // Every queue but the batch renders: a worker process of their own takes them below.
    const queues = JOBS.map((j) => j.queue).filter((q) => q !== QueueName.InvoiceBatchRender)
    sys = await startSystem({ services: ['invoice'], workers: { queues }, env: { REDIS_URL: redis.url } })
  })
  after(async () => {
    await sys?.stop()
    await redis?.child.stop()
  })

  async function restartEmpty(): Promise<void> {
    redis.child.kill()
    await new Promise((r) => redis.child.proc.once('exit', r))
    redis = await startRedisServer({ port: redis.port, appendonly: false })
  }

  it('a single invoice whose render job was lost is enqueued again by its waiter: 200, stored and counted once', async () => {
    const { key, id } = await account(sys, 'starter')
    const render = sys.workers!.workers.find((w) => w.queue === QueueName.InvoiceRender)!.worker
    await render.pause()
    const pending = post(`${sys.url.invoice}/invoice`, { items: [{ description: 'Survives Redis', quantity: 3, unit_price: 7 }] }, { key })
    const job = await waitFor(async () => (await sys.platform.queues.queue(QueueName.InvoiceRender).getWaiting())[0], 30_000, 'its job to wait')
    assert.equal(job.data.record.account_id, id)
    assert.equal(await getInvoice(sys.platform.db, job.id!), null, 'nothing stored before the render: the job is all there is')
    await restartEmpty()
    // The job is gone with Redis' data; the waiter puts it back.
    render.resume()
    const res = await pending
    assert.equal(res.status, 200, res.text)
    assert.equal(res.headers.get('content-type'), 'application/pdf')
    assert.equal(res.headers.get('x-invoice-id'), job.id)
    const stored = await getInvoice(sys.platform.db, job.id!)
    assert.equal(stored!.status, 'done')
    assert.equal(stored!.charged, true)
    assert.equal((await get(`${sys.url.invoice}/usage`, { key })).json.invoices_this_month, 1)
    assert.equal(await invoiceSlots(sys.platform.db).countDocuments({ account_id: id }), 1, 'recorded once')
  })

  it('batch rows taken by a render job that Redis lost (its worker gone too) are rendered, not failed', async () => {
    const { key } = await account(sys, 'starter')
    const worker = spawnWorker(sys.env, ['--queues', QueueName.InvoiceBatchRender, '--concurrency', '1'])
    try {
      const batch = await submit(sys, key, rows(30))
      assert.equal(batch.status, 202, batch.text)
      const batchId = batch.json.batch_id as string
      await waitFor(async () => (await invoiceSlots(sys.platform.db).countDocuments({ batch_id: batchId, status: 'rendering' })) > 0, 120_000, 'rows to be rendering')
      // The worker stops mid-chunk; Redis restarts without its data; the worker dies.
      process.kill(worker.pid!, 'SIGSTOP')
      await restartEmpty()
      worker.kill('SIGKILL')
      await waitForExit(worker)
      const rescue = await startWorkers(sys.platform, { queues: [QueueName.InvoiceBatchRender] })
      try {
        const st = await waitFinished(sys, key, batchId, 150_000)
        assert.equal(st.counts.failed, 0, JSON.stringify(st.counts))
        assert.equal(st.counts.done, 30)
        // Rendered because they were handed back, not by luck: some rows went back to the queue.
        assert.ok((await invoiceSlots(sys.platform.db).countDocuments({ batch_id: batchId, requeues: { $gte: 1 } })) > 0)
      } finally {
        await rescue.close(5_000)
      }
    } finally {
      if (worker.exitCode === null && worker.signalCode === null) worker.kill('SIGKILL')
    }
  })
})
