// Redis managed by Sentinel (1 master, 1 replica, 1 sentinel, all real): `SENTINEL FAILOVER` in the
// middle of a stream of invoices and captures with forwarding. A process configured with the
// sentinel URL recovers by itself within 10 s and loses nothing it accepted; a process pointed
// at the old master's address cannot write any more, and its /readyz says so within 5 s. Then,
// with the replica stopped, a batch is not counted as enqueued (nor its watcher dropped from the
// outbox) until the replica has the jobs (WAIT: src/platform/redis/replica-ack.ts).
import assert from 'node:assert/strict'
import { Redis } from 'ioredis'
import { startSentinel, type TestSentinel } from './helpers/redis-topologies.ts'
import { startSystem, type TestSystem } from './helpers/system.ts'
import { get, post } from './helpers/http.ts'
import { account, rows, submit, usage, waitFinished } from './helpers/invoice-batch.ts'
import { capture, createEndpoint, signup, startTarget, waitFor, type Target } from './helpers/webhooks.ts'
import { getInvoice, invoiceSlots } from '../src/invoice/store/invoice-store.ts'
import { awaitedJobWake, WAKE_BYTES } from './helpers/wake.ts'

describe('platform: Redis behind Sentinel, through a failover', () => {
  let sen: TestSentinel
  let sys: TestSystem
  let stale: TestSystem
  let target: Target
  before(async function () {
    this.timeout(120_000)
    sen = await startSentinel()
    sys = await startSystem({ env: { REDIS_URL: sen.url } })
    // Same data, but Redis named by the master's own address (what operators do;
    // docs/redis.md, "Redis topologies").
    stale = await startSystem({
      services: ['invoice'],
      workers: false,
      env: { REDIS_URL: `redis://127.0.0.1:${sen.master.port}`, MONGO_DB: sys.env.MONGO_DB!, QUEUE_PREFIX: sys.env.QUEUE_PREFIX! },
    })
    target = await startTarget()
  })
  after(async () => {
    await target?.close()
    await stale?.stop()
    await sys?.stop()
    await sen?.stop()
  })

  it('recovers within 10 s, loses no accepted invoice, capture or batch; a stale master address says not ready', async function () {
    this.timeout(240_000)
    const { key: invoiceKey } = await account(sys, 'business')
    const hookKey = await signup(sys, 'starter')
    const ep = await createEndpoint(sys, hookKey, { forward_url: target.url })
    assert.equal((await get(`${sys.root.invoice}/readyz`)).status, 200)
    assert.equal((await get(`${stale.root.invoice}/readyz`)).status, 200)

    // The stream: one invoice and one capture at a time, back to back, until told to stop.
    let stop = false
    const accepted = { invoices: 0, captures: [] as string[], failedInvoices: 0, failedCaptures: 0 }
    let lastOk = 0
    const invoices = (async () => {
      while (!stop) {
        const r = await post(`${sys.url.invoice}/invoice`, { items: [{ description: 'x', quantity: 1, unit_price: 1 }] }, { key: invoiceKey }).catch(() => null)
        if (r?.status === 200) {
          accepted.invoices++
          lastOk = Date.now()
        } else accepted.failedInvoices++
      }
    })()
    let n = 0
    const captures = (async () => {
      while (!stop) {
        const body = `capture-${++n}`
        const r = await capture(ep.url, { body }).catch(() => null)
        if (r?.status === 200) accepted.captures.push(body)
        else accepted.failedCaptures++
        await new Promise((res) => setTimeout(res, 20))
      }
    })()
    await waitFor(() => accepted.invoices >= 3 && accepted.captures.length >= 3, 60_000, 'the stream to flow')
    const batch = await submit(sys, invoiceKey, rows(20))
    assert.equal(batch.status, 202, batch.text)

    const oldMaster = await sen.masterPort()
    const t0 = Date.now()
    await sen.sentinelConn.call('SENTINEL', 'FAILOVER', sen.masterName)
    await waitFor(async () => (await sen.masterPort()) !== oldMaster, 30_000, 'the sentinel to promote the replica')
    // Recovered: an invoice (queue + worker + Redis writes) succeeds after the switch, and readiness is 200.
    const switched = Date.now()
    await waitFor(() => lastOk > switched, 30_000, 'an invoice to succeed after the failover')
    await waitFor(async () => (await get(`${sys.root.invoice}/readyz`)).status === 200, 30_000, 'readiness after the failover')
    const recoveryMs = Date.now() - t0
    // The process still pointed at the old master cannot write once the sentinel has demoted it
    // (some seconds after the switch): not ready within 5 s of that, naming Redis.
    const oldConn = new Redis(oldMaster, '127.0.0.1')
    try {
      await waitFor(async () => (await oldConn.set(`${sys.env.QUEUE_PREFIX}:probe`, '1').catch((e: Error) => e.message)) !== 'OK', 60_000, 'the old master to refuse writes')
    } finally {
      oldConn.disconnect()
    }
    const staleReady = await waitFor(async () => {
      const r = await get(`${stale.root.invoice}/readyz`)
      return r.status === 503 && r
    }, 5_000, 'the stale process to say not ready')
    assert.match(staleReady.json.checks.redis, /^failed: /) // READONLY, or the reconnect it causes
    // And it stays so (a blink while the sentinel drops clients would not tell the truth).
    for (let i = 0; i < 3; i++) {
      await new Promise((r) => setTimeout(r, 1_000))
      assert.equal((await get(`${stale.root.invoice}/readyz`)).status, 503)
    }

    // Keep the stream going a little after recovery, then stop and account for everything.
    await new Promise((r) => setTimeout(r, 1_000))
    stop = true
    await Promise.all([invoices, captures])
    if (process.env.DEBUG_FAILOVER) console.log(`      recovery ${recoveryMs} ms`, JSON.stringify({ ...accepted, captures: accepted.captures.length }))
    assert.ok(recoveryMs <= 10_000, `recovered after ${recoveryMs} ms`)

    // Nothing accepted is lost: usage counts every 200 (and the batch's rows), every capture is forwarded.
    const st = await waitFinished(sys, invoiceKey, batch.json.batch_id, 120_000)
    assert.equal(st.counts.done, 20)
    // A request that failed during the switch may still have rendered (and counted) afterwards.
    const used = await usage(sys, invoiceKey)
    assert.ok(used >= accepted.invoices + 20 && used <= accepted.invoices + accepted.failedInvoices + 20, `usage ${used}, accepted ${accepted.invoices} + 20`)
    await waitFor(() => accepted.captures.every((b) => target.received.some((r) => r.body.toString() === b)), 60_000, 'every accepted capture to be forwarded').catch(async (e: Error) => {
      const missing = accepted.captures.filter((b) => !target.received.some((r) => r.body.toString() === b))
      const docs = await sys.platform.db.collection('webhook_captures').find({ endpoint_id: ep.endpoint_id }, { projection: { id: 1, forward: 1, body: 1 } }).toArray()
      const states = docs.filter((d) => missing.includes(Buffer.from(d.body.buffer).toString())).map((d) => `${d.id}:${d.forward?.status}/${d.forward?.attempts}`)
      assert.fail(`${e.message}: missing ${missing.join(',')} (${states.join(' ')}); outbox ${await sys.platform.db.collection('outbox').countDocuments()}`)
    })
  })

  it('after the failover, a waiting request is still woken: the wake subscription survived the switch', async function () {
    this.timeout(60_000)
    assert.deepEqual(await awaitedJobWake(sys.platform, 't-sentinel-wake'), { event: 'done', payload: WAKE_BYTES })
  })

  it('a batch counts as enqueued, and its watcher leaves the outbox, only once the replica has the jobs', async function () {
    this.timeout(120_000)
    const { key } = await account(sys, 'starter')
    // Whichever node is master now (after the failover above), stop its replica: WAIT gets no
    // acknowledgement, as when a master dies before its replica copied the last writes.
    const masterPort = await sen.masterPort()
    const replica = [sen.master, sen.replica].find((n) => n.port !== masterPort)!
    const group = -replica.child.proc.pid!
    process.kill(group, 'SIGSTOP')
    let batchId = ''
    try {
      const res = await submit(sys, key, rows(20))
      assert.equal(res.status, 202, res.text)
      batchId = res.json.batch_id
      const doc = await sys.platform.db.collection('invoice_batches').findOne({ _id: batchId as never })
      assert.equal(doc?.enqueued, false)
      assert.equal(await sys.platform.db.collection('outbox').countDocuments({ _id: `invoice-batch-watch:${batchId}` as never }), 1)
    } finally {
      process.kill(group, 'SIGCONT')
    }
    const st = await waitFinished(sys, key, batchId, 120_000)
    assert.equal(st.counts.done, 20)
    await waitFor(async () => (await sys.platform.db.collection('outbox').countDocuments({ _id: `invoice-batch-watch:${batchId}` as never })) === 0, 60_000, 'the outbox entry to go')
  })

  it('a single invoice whose render job a failover lost is enqueued again by its waiter: 200, stored and counted once', async function () {
    this.timeout(180_000)
    const { key, id } = await account(sys, 'starter')
    const render = sys.workers!.workers.find((w) => w.queue === 'invoice-render')!.worker
    await render.pause()
    try {
      const pending = post(`${sys.url.invoice}/invoice`, { items: [{ description: 'Through the switch', quantity: 2, unit_price: 9 }] }, { key })
      const queue = sys.platform.queues.queue('invoice-render')
      const job = await waitFor(async () => (await queue.getWaiting())[0], 30_000, 'its job to wait')
      assert.equal(job.data.record.account_id, id)
      const doc = { _id: job.id! } // nothing is stored before the render: the job is all there is
      const oldMaster = await sen.masterPort()
      await sen.sentinelConn.call('SENTINEL', 'FAILOVER', sen.masterName)
      await waitFor(async () => (await sen.masterPort()) !== oldMaster, 30_000, 'the sentinel to promote the replica')
      // What a failover that lost the last writes leaves behind: the new master lacks the job.
      await waitFor(async () => (await queue.remove(doc._id).catch(() => -1)) === 1 || (await queue.getJobState(doc._id).catch(() => '')) === 'unknown', 30_000, 'the job to be gone')
      render.resume()
      const res = await pending
      assert.equal(res.status, 200, res.text)
      assert.equal(res.headers.get('x-invoice-id'), doc._id)
      assert.equal((await getInvoice(sys.platform.db, doc._id))!.status, 'done')
      assert.equal(await usage(sys, key), 1)
      assert.equal(await invoiceSlots(sys.platform.db).countDocuments({ account_id: id }), 1, 'recorded once')
    } finally {
      render.resume()
    }
  })
})
