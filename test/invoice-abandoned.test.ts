// invoices-abandoned: a single invoice whose waiting API process died (here: recorded and charged,
// never enqueued, as when the process is killed between the two) is failed once it is older than
// RENDER_TIMEOUT_MS plus two job locks, and its quota unit comes back; younger ones and batch rows
// are left alone.
import assert from 'node:assert/strict'
import { invoicesAbandonedJob } from '../jobs/invoices-abandoned.ts'
import { clock, monthKey } from '../src/platform/clock.ts'
import { enqueue } from '../src/platform/job.ts'
import { reserve } from '../src/invoice/store/quota-store.ts'
import { getInvoice, insertInvoice } from '../src/invoice/store/invoice-store.ts'
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

  it('fails the old ones and gives their unit back; leaves recent ones and batch rows alone', async () => {
    const key = (await post(`${sys.url.invoice}/signup`, { email: 'abandoned-sweep@example.com' })).json.api_key as string
    const account = (await sys.platform.db.collection('accounts').findOne({ email: 'abandoned-sweep@example.com' }))!
    const period = monthKey(clock.now())
    const usage = async () => (await get(`${sys.url.invoice}/usage`, { key })).json.invoices_this_month as number
    const now = clock.nowMs()
    const record = async (kind: 'single' | 'batch', ageMs: number) => {
      const id = randomId()
      assert.ok(await reserve(sys.platform.db, account._id as unknown as string, period, 5))
      const created = new Date(now - ageMs)
      await insertInvoice(sys.platform.db, {
        _id: id,
        account_id: account._id as unknown as string,
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
})
