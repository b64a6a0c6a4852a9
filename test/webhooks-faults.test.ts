import assert from 'node:assert/strict'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort } from './helpers/ports.ts'
import { outboxSweepJob } from '../jobs/outbox-sweep.ts'
import { startRedisServer, type EmbeddedRedis } from '../src/embedded/redis-server.ts'
import { enqueue } from '../src/platform/queue/job.ts'
import { QueueName } from './helpers/queue-names.ts'
import { spawnWorker, startSystem, waitForExit, type TestSystem } from './helpers/system.ts'
import { get } from './helpers/http.ts'
import { api, capture, createEndpoint, signup, startTarget, waitFor, type Target } from './helpers/webhooks.ts'

describe('webhooks: forwarding survives faults', function () {
  this.timeout(120_000)

  describe('a worker process killed mid-delivery', () => {
    let sys: TestSystem
    let target: Target
    before(async () => {
      // The second worker sends again once the dead one's claim on the attempt has run out (the lease).
      sys = await startSystem({ services: ['webhooks'], workers: false, env: { WEBHOOK_FORWARD_TIMEOUT_MS: '5000', WEBHOOK_FORWARD_LEASE_MS: '8000', WEBHOOK_FORWARD_SCHEDULE_MS: '0,500' } })
    })
    after(async () => {
      await target?.close()
      await sys?.stop()
    })

    it('is delivered by another worker once the dead worker’s lock expires', async () => {
      // The first delivery hangs: the worker is killed while it waits for the answer.
      target = await startTarget((_r, i, res) => {
        if (i > 0) res.end('ok')
      })
      const key = await signup(sys, 'starter')
      const ep = await createEndpoint(sys, key, { forward_url: target.url })
      const first = spawnWorker(sys.env, ['--queues', QueueName.CaptureForward])
      try {
        assert.equal((await capture(ep.url, { body: 'survive me' })).status, 200)
        await waitFor(() => target.received.length === 1, 60_000, 'first delivery to arrive')
      } finally {
        first.kill('SIGKILL')
      }
      await waitForExit(first)
      const second = spawnWorker(sys.env, ['--queues', QueueName.CaptureForward])
      try {
        const done = await waitFor(async () => {
          const r = (await get(api(sys, `/endpoints/${ep.endpoint_id}/requests/1`), { key })).json
          return r.forward?.status === 'delivered' && r
        }, 60_000, 'delivery by the second worker')
        assert.equal(target.received.length, 2)
        assert.ok(target.received.every((r) => r.body.toString() === 'survive me'))
        assert.deepEqual(done.forward_attempts.map((a: any) => a.ok), [true])
      } finally {
        second.kill('SIGTERM')
        await waitForExit(second)
      }
    })
  })

  describe('a Redis restart', () => {
    let redis: EmbeddedRedis
    let sys: TestSystem
    let target: Target
    let port: number
    const dir = mkdtempSync(join(tmpdir(), 'qw-wh-redis-'))
    before(async () => {
      port = await freePort()
      redis = await startRedisServer({ port, dir, appendonly: true })
      sys = await startSystem({
        services: ['webhooks'],
        workers: { queues: [QueueName.CaptureForward, QueueName.OutboxSweep] },
        // Attempt 2 waits 8 s: the test must see it delayed in Redis before it runs (3 s was too
        // short a window on a loaded CI machine).
        // The forward job's lock is its claim's lease: 8 s here (as JOB_LOCK_MS), so a job that
        // was active when Redis went away is taken over within the test's waits.
        env: { REDIS_URL: redis.url, WEBHOOK_FORWARD_SCHEDULE_MS: '0,8000', WEBHOOK_FORWARD_TIMEOUT_MS: '5000', WEBHOOK_FORWARD_LEASE_MS: '8000' },
      })
    })
    after(async () => {
      await target?.close()
      await sys?.stop()
      await redis?.child.stop()
    })

    it('loses no forward: a capture taken while Redis is down, and a retry queued before it went down', async () => {
      let failFirst = true
      target = await startTarget((r, _i, res) => {
        if (r.body.toString() === 'queued' && failFirst) {
          failFirst = false
          res.statusCode = 500
        }
        res.end()
      })
      const key = await signup(sys, 'starter')
      const ep = await createEndpoint(sys, key, { forward_url: target.url })
      const state = async (id: number) => (await get(api(sys, `/endpoints/${ep.endpoint_id}/requests/${id}`), { key })).json

      // 1: first attempt fails, so attempt 2 sits in Redis as a delayed job when Redis stops.
      assert.equal((await capture(ep.url, { body: 'queued' })).status, 200)
      // 'retrying' is recorded before attempt 2 is enqueued (outbox entry, delayed job, entry
      // removed): wait for the whole of it, or a slow machine stops Redis in between.
      const forwardQueue = sys.platform.queues.queue(QueueName.CaptureForward)
      await waitFor(
        async () =>
          (await state(1)).forward?.status === 'retrying' &&
          (await forwardQueue.getDelayedCount()) === 1 &&
          (await sys.platform.db.collection('outbox').countDocuments({ queue: QueueName.CaptureForward })) === 0,
        20_000,
        'retry to be scheduled in Redis',
      )
      await redis.child.stop() // SIGTERM: redis writes its append-only file

      // 2: captured while Redis is down: stored and acknowledged, its forward left in the outbox.
      // (Under load the worker may also re-run attempt 1's job, whose lock it could not renew, and
      // record attempt 2 there again: the same job id, so harmless, and the count below can be 2.)
      const down = await capture(ep.url, { body: 'while down' })
      assert.equal(down.status, 200)
      const waiting = await sys.platform.db.collection('outbox').find({ queue: QueueName.CaptureForward }).toArray()
      assert.ok(waiting.some((e) => (e.payload as { request_id: number }).request_id === 2), `capture 2's forward is in the outbox: ${JSON.stringify(waiting.map((e) => e._id))}`)
      assert.ok(waiting.every((e) => (e.payload as { request_id: number }).request_id === 2 || (e.payload as { attempt: number }).attempt === 2), 'nothing else but attempt 2 of capture 1')

      redis = await startRedisServer({ port, dir, appendonly: true })
      // The sweep normally runs every minute; run it now (min age 0) through its queue.
      await waitFor(async () => {
        try {
          await enqueue(sys.platform, outboxSweepJob, { min_age_ms: 0 }, { jobId: `sweep-${Date.now()}` })
          return true
        } catch {
          return false
        }
      }, 30_000, 'Redis to accept jobs again')
      await waitFor(async () => (await state(2)).forward?.status === 'delivered', 40_000, 'forward of the capture taken while Redis was down')
      await waitFor(async () => (await state(1)).forward?.status === 'delivered', 40_000, 'delayed retry kept across the restart')
      assert.equal(await sys.platform.db.collection('outbox').countDocuments({ queue: QueueName.CaptureForward }), 0)
      assert.deepEqual(target.received.map((r) => r.body.toString()).sort(), ['queued', 'queued', 'while down'])
    })
  })
})
