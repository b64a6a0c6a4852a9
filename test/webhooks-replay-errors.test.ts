// Replay's error answers that need a system in a particular state: no worker takes the job (504),
// the target accepts the connection but never answers (504), the capture is deleted between the
// request and the job (404). The cheap ones (502, 400, 403, unknown request) are in
// webhooks-forward.test.ts.
import assert from 'node:assert/strict'
import { QueueName } from './helpers/queue-names.ts'
import { replays } from '../src/webhooks/store/replay-store.ts'
import { call } from './helpers/http.ts'
import { startSystem, type TestSystem } from './helpers/system.ts'
import { api, capture, createEndpoint, signup, startTarget, waitFor, type Target } from './helpers/webhooks.ts'

describe('webhooks: replay errors', function () {
  this.timeout(60_000)
  const targets: Target[] = []
  const target = async (...a: Parameters<typeof startTarget>) => {
    const t = await startTarget(...a)
    targets.push(t)
    return t
  }
  after(async () => Promise.all(targets.map((t) => t.close())))

  const replay = (sys: TestSystem, key: string, token: string, url: string) =>
    call('POST', api(sys, `/endpoints/${token}/requests/1/replay`), { json: { url }, key })

  describe('with the capture-replay worker taking no jobs (paused)', () => {
    let sys: TestSystem
    before(async () => {
      // The ingress waits for the job up to the forward timeout + 10 s. A worker consumes the
      // queue (no worker at all is a 503 at once) but takes nothing until resumed.
      sys = await startSystem({ services: ['webhooks'], workers: { queues: [QueueName.CaptureReplay] }, env: { WEBHOOK_FORWARD_TIMEOUT_MS: '200' } })
      await Promise.all(sys.workers!.workers.map((w) => w.worker.pause()))
    })
    after(async () => sys?.stop())

    it('504 when no worker takes the job in time; the job is withdrawn and the target never called', async () => {
      const t = await target()
      const key = await signup(sys, 'starter')
      const ep = await createEndpoint(sys, key)
      await capture(ep.url, { body: 'late' })
      const r = await replay(sys, key, ep.endpoint_id, t.url)
      assert.equal(r.status, 504, r.text)
      assert.deepEqual(r.json, { error: 'Replay timed out: the target did not answer in time' })
      const counts = await sys.platform.queues.queue(QueueName.CaptureReplay).getJobCounts('waiting', 'delayed', 'active')
      assert.deepEqual(counts, { waiting: 0, delayed: 0, active: 0 })
      assert.equal(t.received.length, 0)
    })

    it('404 when the capture is deleted between the request and the job; the target is never called', async () => {
      const t = await target()
      const key = await signup(sys, 'starter')
      const ep = await createEndpoint(sys, key)
      await capture(ep.url, { body: 'soon gone' })
      const pending = replay(sys, key, ep.endpoint_id, t.url)
      // The replay is recorded and queued; nothing works on it yet.
      await waitFor(() => replays(sys.platform.db).findOne({ endpoint_id: ep.endpoint_id, state: 'pending' }), 10_000, 'the pending replay')
      const del = await call('DELETE', api(sys, `/endpoints/${ep.endpoint_id}`), { key })
      assert.equal(del.status, 200, del.text)
      assert.equal(del.json.requests_deleted, 1)
      sys.workers!.workers.forEach((w) => w.worker.resume())
      try {
        const r = await pending
        assert.equal(r.status, 404, r.text)
        assert.deepEqual(r.json, { error: 'Request not found' })
      } finally {
        await Promise.all(sys.workers!.workers.map((w) => w.worker.pause()))
      }
      assert.equal(t.received.length, 0)
    })
  })

  describe('with a target that never answers', () => {
    let sys: TestSystem
    before(async () => {
      sys = await startSystem({ services: ['webhooks'], env: { WEBHOOK_FORWARD_TIMEOUT_MS: '500' } })
    })
    after(async () => sys?.stop())

    it('504 naming the target timeout, once the request reached the target', async () => {
      const t = await target(() => undefined) // reads the request, never answers
      const key = await signup(sys, 'starter')
      const ep = await createEndpoint(sys, key)
      await capture(ep.url, { body: 'anyone there?' })
      const r = await replay(sys, key, ep.endpoint_id, t.url)
      assert.equal(r.status, 504, r.text)
      assert.deepEqual(r.json, { error: 'Replay target timed out: no complete answer within 500 ms' })
      assert.equal(t.received.length, 1)
      assert.equal(t.received[0]!.body.toString(), 'anyone there?')
    })
  })
})
