// A worker process `kill -9`ed while it holds a batch chunk, with the default JOB_LOCK_MS: another
// worker takes the chunk over within 15 s (BullMQ reports it stalled and moves it back to wait),
// and the batch finishes with every row rendered once.
import assert from 'node:assert/strict'
import { QueueEvents } from 'bullmq'
import { invoiceBatchRenderContract } from '../src/invoice/job-contracts.ts'
import { createRedis } from '../src/platform/redis/redis.ts'
import { spawnWorker, startSystem, waitForExit, type TestSystem } from './helpers/system.ts'
import { get } from './helpers/http.ts'
import { account, rows, submit, usage, waitFinished } from './helpers/invoice-batch.ts'

describe('platform: a dead worker\'s job is taken over', () => {
  let sys: TestSystem
  let events: QueueEvents
  const children: ReturnType<typeof spawnWorker>[] = []
  before(async () => {
    // JOB_LOCK_MS unset: the default, not the short lock the other tests use.
    sys = await startSystem({ services: ['invoice'], workers: false, env: { JOB_LOCK_MS: '' } })
    const queue = invoiceBatchRenderContract.queue
    events = new QueueEvents(queue, { connection: createRedis(sys.env.REDIS_URL!, 'blocking'), prefix: sys.platform.queues.prefixOf(queue) })
    await events.waitUntilReady()
  })
  after(async () => {
    for (const c of children) if (c.exitCode === null) c.kill('SIGKILL')
    await events?.close()
    await sys?.stop()
  })

  it('within 15 s of the kill, with the default lock', async function () {
    this.timeout(180_000)
    assert.equal(sys.config.JOB_LOCK_MS, 8_000)
    const { key } = await account(sys, 'business')
    const first = spawnWorker(sys.env)
    children.push(first)
    const res = await submit(sys, key, rows(200))
    assert.equal(res.status, 202, res.text)
    for (;;) {
      const st = (await get(res.json.status_url, { key })).json
      if (st.counts.rendering > 0) break
      await new Promise((r) => setTimeout(r, 50))
    }
    const stalled = new Promise<number>((resolve) => events.once('stalled', () => resolve(Date.now())))
    first.kill('SIGKILL')
    const killedAt = Date.now()
    await waitForExit(first)
    const second = spawnWorker(sys.env)
    children.push(second)

    const takenOver = (await stalled) - killedAt
    if (process.env.DEBUG_FAILOVER) console.log(`      chunk taken over ${takenOver} ms after the kill`)
    assert.ok(takenOver <= 15_000, `taken over after ${takenOver} ms`)
    const st = await waitFinished(sys, key, res.json.batch_id, 150_000)
    assert.equal(st.counts.done, 200)
    assert.equal(await usage(sys, key), 200)
  })
})
