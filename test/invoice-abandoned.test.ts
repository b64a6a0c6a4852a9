// invoices-abandoned: a single invoice whose waiting API process died (here: recorded and charged,
// never enqueued, as when the process is killed between the two) is failed once it is older than
// RENDER_TIMEOUT_MS plus two job locks, and its quota unit comes back; younger ones and batch rows
// are left alone. It also settles the quota holds of requests whose process died before they
// recorded their work (taken units come back, partial batches go) or before they confirmed it
// (units stay charged, the batch gets its watcher).
import assert from 'node:assert/strict'
import { invoicesAbandonedJob } from '../jobs/invoices-abandoned.ts'
import { clock, monthKey } from '../src/platform/clock.ts'
import { enqueue } from '../src/platform/queue/job.ts'
import { cancelHold, confirmHold, reserve } from '../src/invoice/store/quota-store.ts'
import { batches } from '../src/invoice/batch/batch-store.ts'
import { getInvoice, insertInvoice, invoices, recordDone } from '../src/invoice/store/invoice-store.ts'
import { batchRowId } from '../src/invoice/store/slot-key.ts'
import { invoiceBatchWatchContract } from '../src/invoice/job-contracts.ts'
import { randomId } from '../src/platform/ids.ts'
import { get, post } from './helpers/http.ts'
import { queuesIdle, startSystem, type TestSystem } from './helpers/system.ts'

describe('invoices-abandoned: charged single invoices nobody waits for any more', function () {
  this.timeout(60_000)
  let sys: TestSystem
  before(async () => {
    sys = await startSystem({ services: ['invoice'], workers: { queues: [invoicesAbandonedJob.queue] }, env: { RENDER_TIMEOUT_MS: '5000', JOB_LOCK_MS: '3000' } })
  })
  after(async () => sys?.stop())

  /** A new account: its id, and how many invoices its usage says it has this month. */
  const signup = async (email: string) => {
    const key = (await post(`${sys.url.invoice}/signup`, { email })).json.api_key as string
    const accountId = (await sys.platform.db.collection('accounts').findOne({ email }))!._id as unknown as string
    const usage = async () => (await get(`${sys.url.invoice}/usage`, { key })).json.invoices_this_month as number
    return { accountId, usage }
  }

  it('fails the old ones and gives their unit back; leaves recent ones and batch rows alone', async () => {
    const { accountId, usage } = await signup('abandoned-sweep@example.com')
    const period = monthKey(clock.now())
    const now = clock.nowMs()
    const record = async (kind: 'single' | 'batch', ageMs: number) => {
      const id = randomId()
      assert.ok(await reserve(sys.platform.db, accountId, period, 5))
      const created = new Date(now - ageMs)
      await insertInvoice(sys.platform.db, {
        _id: id,
        account_id: accountId,
        kind,
        ...(kind === 'batch' ? { batch_id: 'b-none', row: 0 } : {}),
        request: { items: [{ description: 'x', quantity: 1, unit_price: 1 }] } as never,
        period,
        charged: true,
        created_at: created,
        expires_at: new Date(created.getTime() + 86_400_000),
      })
      return id
    }
    // Cutoff: 5 s render timeout + 2 × 3 s lock = 11 s.
    const old = await record('single', 60_000)
    const recent = await record('single', 1_000)
    const row = await record('batch', 60_000)
    assert.equal(await usage(), 3)

    await enqueue(sys.platform, invoicesAbandonedJob, {}, { jobId: 'sweep-now' })
    await queuesIdle(sys, [invoicesAbandonedJob.queue])
    assert.equal((await getInvoice(sys.platform.db, old))!.status, 'failed')
    assert.equal((await getInvoice(sys.platform.db, old))!.charged, false)
    assert.equal((await getInvoice(sys.platform.db, recent))!.status, 'queued')
    assert.equal((await getInvoice(sys.platform.db, row))!.status, 'queued', 'batch rows are the batch watcher’s')
    assert.equal(await usage(), 2, 'exactly the abandoned unit came back')

    // Running again changes nothing (idempotent).
    await enqueue(sys.platform, invoicesAbandonedJob, {}, { jobId: 'sweep-again' })
    await queuesIdle(sys, [invoicesAbandonedJob.queue])
    assert.equal(await usage(), 2)
  })

  it('settles the holds of requests that died: unrecorded units come back, recorded ones stay', async () => {
    const { accountId, usage } = await signup('abandoned-holds@example.com')
    const db = sys.platform.db
    const period = monthKey(clock.now())
    // Holds taken a minute ago (older than the 11 s cutoff), as a process killed at that moment left them.
    const hold = async (kind: 'invoice' | 'batch', n: number, ageMs = 60_000) => {
      const id = randomId()
      clock.setNow(new Date(Date.now() - ageMs))
      try {
        assert.ok(await reserve(db, accountId, period, 100, n, { id, kind }))
      } finally {
        clock.reset()
      }
      return id
    }
    const row = (batchId: string, i: number) => ({
      _id: batchRowId(batchId), account_id: accountId, kind: 'batch' as const, batch_id: batchId, row: i, status: 'queued' as const,
      request: { items: [{ description: 'x', quantity: 1, unit_price: 1 }] } as never, period, charged: true,
      created_at: clock.now(), updated_at: clock.now(), expires_at: new Date(clock.nowMs() + 86_400_000),
    })
    const batch = (id: string, total: number) => batches(db).insertOne({ _id: id, account_id: accountId, total, period, status: 'processing', enqueued: false, status_url: 'x', archive_url: 'x', created_at: clock.now(), updated_at: clock.now() } as never)

    const lostInvoice = await hold('invoice', 1) // died before its render was recorded (or enqueued)
    const partialBatch = await hold('batch', 10) // died during the rows' insertMany: 4 of 10 written
    await batch(partialBatch, 10)
    await invoices(db, partialBatch).insertMany(Array.from({ length: 4 }, (_, i) => row(partialBatch, i)))
    const wholeBatch = await hold('batch', 3) // died after writing everything, before confirming
    await batch(wholeBatch, 3)
    await invoices(db, wholeBatch).insertMany(Array.from({ length: 3 }, (_, i) => row(wholeBatch, i)))
    const young = await hold('invoice', 1, 1_000) // a request still running
    assert.equal(await usage(), 15)

    await enqueue(sys.platform, invoicesAbandonedJob, {}, { jobId: 'holds-now' })
    await queuesIdle(sys, [invoicesAbandonedJob.queue])
    assert.equal(await usage(), 4, 'the lost invoice and the partial batch gave their 11 units back; 3 + 1 stay')
    assert.equal(await batches(db).countDocuments({ _id: partialBatch }), 0, 'the partial batch is gone')
    assert.equal(await invoices(db, partialBatch).countDocuments({ batch_id: partialBatch }), 0, 'with its rows')
    assert.equal(await batches(db).countDocuments({ _id: wholeBatch }), 1, 'the recorded batch stays')
    assert.ok(await db.collection('outbox').findOne({ job_id: wholeBatch }) || (await sys.platform.queues.queue(invoiceBatchWatchContract.queue).getJob(wholeBatch)), 'and gets its watcher')
    // The young hold is the running request's: its confirm still works; a settled hold's does not.
    assert.equal(await confirmHold(db, accountId, period, young), true)
    // The lost invoice is recorded failed (its unit given back) and its hold settled: a render of it
    // that still comes is not kept, so it is never an invoice for free.
    const lost = await getInvoice(db, lostInvoice)
    assert.deepEqual([lost?.status, lost?.charged, lost?.error?.status], ['failed', false, 504])
    assert.equal(await confirmHold(db, accountId, period, lostInvoice), false, 'its hold is settled')
    const late = { _id: lostInvoice, account_id: accountId, kind: 'single' as const, period, created_at: clock.now() }
    assert.equal(await recordDone(db, late, Buffer.from('%PDF-late'), 1, 30), false, 'a late render is refused')
    assert.equal((await getInvoice(db, lostInvoice))?.status, 'failed')
    assert.equal(await cancelHold(db, accountId, period, wholeBatch), false, 'a confirmed hold is never given back')

    await enqueue(sys.platform, invoicesAbandonedJob, {}, { jobId: 'holds-again' })
    await queuesIdle(sys, [invoicesAbandonedJob.queue])
    assert.equal(await usage(), 4, 'idempotent')
  })

  it('a failed invoice whose writer died before giving the unit back: the sweep gives it back, once, and settles the hold', async () => {
    const { accountId, usage } = await signup('abandoned-failed@example.com')
    const db = sys.platform.db
    const period = monthKey(clock.now())
    const id = randomId()
    clock.setNow(new Date(Date.now() - 60_000)) // older than the 11 s cutoff
    try {
      assert.ok(await reserve(db, accountId, period, 5, 1, { id, kind: 'invoice' }))
      // What recordFailed leaves when its process dies between the insert and the release.
      await invoices(db, id).insertOne({
        _id: id, account_id: accountId, kind: 'single', status: 'failed', period, charged: true, error: { status: 503, message: 'x' },
        created_at: clock.now(), updated_at: clock.now(), expires_at: new Date(clock.nowMs() + 86_400_000),
      })
    } finally {
      clock.reset()
    }
    assert.equal(await usage(), 1)
    for (const jobId of ['failed-now', 'failed-again']) {
      await enqueue(sys.platform, invoicesAbandonedJob, {}, { jobId: `${jobId}-${id}` })
      await queuesIdle(sys, [invoicesAbandonedJob.queue])
      assert.equal(await usage(), 0, jobId)
    }
    assert.equal((await getInvoice(db, id))?.charged, false)
    assert.equal(await confirmHold(db, accountId, period, id), false, 'its hold is settled')
  })
})
