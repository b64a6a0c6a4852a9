// Forwarding with the CPU saturated by another process: a job whose BullMQ lock is lost while its
// attempt is in flight is re-run, and the re-run must not send again (the attempt's claim,
// src/webhooks/forward/forward-claim.ts); a run that died holding the claim is taken over after its
// lease and sends again exactly once. The lock loss is made deterministic by deleting the lock
// key in Redis — what an expired lock is — instead of hoping the load starves the renewal.
import assert from 'node:assert/strict'
import { spawn, type ChildProcess } from 'node:child_process'
import type { ServerResponse } from 'node:http'
import { Job } from 'bullmq'
import { attemptCollection } from '../src/webhooks/store/capture-store.ts'
import { forwardClaims } from '../src/webhooks/forward/forward-claim.ts'
import { DELIVERY_ID_HEADER } from '../src/webhooks/forward/forward.ts'
import { startWorkers } from '../workers/main.ts'
import { QueueName } from './helpers/queue-names.ts'
import { spawnWorker, startSystem, waitForExit, type TestSystem } from './helpers/system.ts'
import { get } from './helpers/http.ts'
import { api, capture, createEndpoint, signup, startTarget, waitFor, type Target } from './helpers/webhooks.ts'

/** Arrivals per delivery id. */
function perDelivery(target: Target): number[] {
  const n = new Map<string, number>()
  for (const r of target.received) {
    const id = String(r.headers[DELIVERY_ID_HEADER.toLowerCase()])
    n.set(id, (n.get(id) ?? 0) + 1)
  }
  return [...n.values()]
}

describe('webhooks: forwarding with the CPU saturated', function () {
  this.timeout(120_000)
  let hog: ChildProcess[] = []
  before(() => {
    // Two busy processes per core of this 2-core machine's budget: the system competes for CPU.
    hog = Array.from({ length: 3 }, () => spawn(process.execPath, ['-e', 'for(;;){}'], { stdio: 'ignore' }))
  })
  after(async () => {
    for (const h of hog) h.kill('SIGKILL')
    await Promise.all(hog.map((h) => waitForExit(h)))
  })

  describe('a re-run while the first attempt is in flight', () => {
    let sys: TestSystem
    let target: Target
    const held: ServerResponse[] = []
    before(async () => {
      sys = await startSystem({
        services: ['webhooks'],
        workers: { queues: [QueueName.CaptureForward] },
        // The forward job's lock is its claim's lease (21 s: the stalled check comes every ~5 s);
        // the timeout outlasts the few seconds the test holds the requests.
        env: { JOB_LOCK_MS: '2000', WEBHOOK_FORWARD_TIMEOUT_MS: '20000', WEBHOOK_FORWARD_LEASE_MS: '21000' },
      })
      // Every request waits for the test to answer it.
      target = await startTarget((_r, _i, res) => held.push(res))
    })
    after(async () => {
      for (const res of held) res.end()
      await target?.close()
      await sys?.stop()
    })

    it('sends nothing twice: each capture arrives once and is recorded once', async () => {
      const N = 5
      const key = await signup(sys, 'starter')
      const ep = await createEndpoint(sys, key, { forward_url: target.url })
      for (let i = 0; i < N; i++) assert.equal((await capture(ep.url, { body: `in flight ${i}` })).status, 200)
      await waitFor(() => target.received.length === N, 60_000, 'every first attempt to reach the target')

      // Their locks are lost while the requests wait for an answer: BullMQ declares the jobs
      // stalled and runs them again.
      const queue = sys.platform.queues.queue(QueueName.CaptureForward)
      const prefix = sys.platform.queues.prefixOf(QueueName.CaptureForward)
      const jobs = await queue.getJobs(['active'])
      assert.equal(jobs.length, N)
      for (const job of jobs) await sys.platform.redis.del(`${prefix}:${QueueName.CaptureForward}:${job.id}:lock`)
      await waitFor(async () => {
        const now = await Promise.all(jobs.map((j) => Job.fromId(queue, j.id!)))
        const states = await Promise.all(jobs.map((j) => queue.getJobState(j.id!)))
        return now.every((j) => j!.attemptsStarted >= 2) && states.every((s) => s === 'active')
      }, 60_000, 'every job to be re-run')
      assert.equal(target.received.length, N) // the re-runs wait for the claim's holder

      for (const res of held.splice(0)) res.end('ok')
      await waitFor(async () => {
        const c = await queue.getJobCounts('active', 'wait')
        return c.active + c.wait === 0
      }, 60_000, 'the forward queue to be idle')
      for (let id = 1; id <= N; id++) {
        const r = (await get(api(sys, `/endpoints/${ep.endpoint_id}/requests/${id}`), { key })).json
        assert.equal(r.forward.status, 'delivered')
        assert.equal(await attemptCollection(sys.platform.db, ep.endpoint_id, id).countDocuments({ endpoint_id: ep.endpoint_id, request_id: id }), 1)
      }
      assert.deepEqual(perDelivery(target), Array(N).fill(1))
      assert.equal(await forwardClaims(sys.platform.db).countDocuments({ _id: { $regex: `^${ep.endpoint_id}\\.` } }), 0)
    })
  })

  describe('a worker killed while it holds the claim', () => {
    let sys: TestSystem
    let target: Target
    before(async () => {
      sys = await startSystem({
        services: ['webhooks'],
        workers: false,
        env: { JOB_LOCK_MS: '2000', WEBHOOK_FORWARD_TIMEOUT_MS: '2000', WEBHOOK_FORWARD_LEASE_MS: '4000' },
      })
      // The first request is never answered (its worker dies waiting); later ones are.
      target = await startTarget((_r, i, res) => {
        if (i > 0) res.end('ok')
      })
    })
    after(async () => {
      await target?.close()
      await sys?.stop()
    })

    it('is taken over once the lease ran out and sent again exactly once', async () => {
      const key = await signup(sys, 'starter')
      const ep = await createEndpoint(sys, key, { forward_url: target.url })
      const first = spawnWorker(sys.env, ['--queues', QueueName.CaptureForward])
      try {
        assert.equal((await capture(ep.url, { body: 'take me over' })).status, 200)
        await waitFor(() => target.received.length === 1, 60_000, 'the first attempt to reach the target')
        assert.equal(await forwardClaims(sys.platform.db).countDocuments({ _id: { $regex: `^${ep.endpoint_id}\\.` } }), 1)
      } finally {
        first.kill('SIGKILL')
      }
      await waitForExit(first)
      // The survivor runs in this process (starting a second process under the hog is slow).
      const second = await startWorkers(sys.platform, { queues: [QueueName.CaptureForward] })
      try {
        const done = await waitFor(async () => {
          const r = (await get(api(sys, `/endpoints/${ep.endpoint_id}/requests/1`), { key })).json
          return r.forward?.status === 'delivered' && r
        }, 60_000, 'delivery by the second worker')
        const queue = sys.platform.queues.queue(QueueName.CaptureForward)
        await waitFor(async () => {
          const c = await queue.getJobCounts('active', 'wait')
          return c.active + c.wait === 0
        }, 30_000, 'the forward queue to be idle')
        assert.deepEqual(perDelivery(target), [2])
        assert.ok(target.received.every((r) => r.body.toString() === 'take me over'))
        assert.deepEqual(done.forward_attempts.map((a: any) => a.ok), [true])
        assert.equal(await forwardClaims(sys.platform.db).countDocuments({ _id: { $regex: `^${ep.endpoint_id}\\.` } }), 0)
      } finally {
        await second.close(2_000)
      }
    })
  })
})
