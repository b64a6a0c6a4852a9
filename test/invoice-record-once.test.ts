// A single invoice is recorded once, when it is settled (docs/architecture.md, "A single invoice,
// recorded once"): nothing is stored while it waits for its render, the worker records it with its
// PDF and hands the PDF to the waiting request with the wake; a render recorded twice (Redis lost
// its job while a worker still rendered it) or after the invoice was given up is not kept; a job
// of an earlier version (the invoice stored before its render) is still rendered.
import assert from 'node:assert/strict'
import { clock, monthKey } from '../src/platform/clock.ts'
import { randomId } from '../src/platform/ids.ts'
import { renderAndRecord } from '../src/invoice/pdf/job-render-invoice.ts'
import { awaitInvoicePdf, giveUp } from '../src/invoice/await-invoice.ts'
import type { HttpError } from '../src/platform/http/errors.ts'
import { Job } from 'bullmq'
import { invoiceRenderContract } from '../src/invoice/job-contracts.ts'
import { invoiceBodySchema } from '../src/invoice/invoice-schema.ts'
import { getInvoice, insertInvoice, invoices, invoiceSlots, recordDone, releaseIfFailed } from '../src/invoice/store/invoice-store.ts'
import { reserve, type UsageDoc } from '../src/invoice/store/quota-store.ts'
import { enqueue } from '../src/platform/queue/job.ts'
import { get, post } from './helpers/http.ts'
import { pdfText } from './helpers/pdf.ts'
import { startSystem, type TestSystem } from './helpers/system.ts'
import { until } from './helpers/wait.ts'

describe('invoice: a single invoice recorded once, with its PDF', function () {
  this.timeout(60_000)
  let sys: TestSystem
  before(async () => {
    sys = await startSystem({ services: ['invoice'], workers: { queues: [invoiceRenderContract.queue] } })
  })
  after(async () => sys?.stop())

  const period = monthKey(clock.now())
  const signup = async (name: string) => {
    const email = `${name}-${randomId()}@example.com`.toLowerCase()
    const key = (await post(`${sys.url.invoice}/signup`, { email })).json.api_key as string
    const accountId = (await sys.platform.db.collection('accounts').findOne({ email }))!._id as unknown as string
    return { key, accountId }
  }
  const counter = async (accountId: string) => {
    const c = await sys.platform.db.collection<UsageDoc>('invoice_usage').findOne({ _id: `${accountId}:${period}` })
    return { count: c?.count ?? 0, holds: c?.holds_n ?? 0 }
  }
  const request = (description: string) => invoiceBodySchema.parse({ invoice_number: description, items: [{ description, quantity: 2, unit_price: 21.5 }] })
  const renderQueue = () => sys.platform.queues.queue(invoiceRenderContract.queue)

  it('stores nothing while the render waits; answers with the PDF the worker recorded, charged once', async () => {
    const { key, accountId } = await signup('record-once')
    await Promise.all(sys.workers!.workers.map((w) => w.worker.pause()))
    let pending: Promise<Awaited<ReturnType<typeof post>>> | undefined
    try {
      pending = post(`${sys.url.invoice}/invoice`, request('Recorded once'), { key })
      const job = await until('the render job to wait', async () => (await renderQueue().getWaiting())[0] ?? null)
      assert.equal(job.data.record.account_id, accountId)
      assert.equal(job.data.record.period, period)
      assert.equal(await getInvoice(sys.platform.db, job.id!), null, 'nothing stored before the render')
      assert.deepEqual(await counter(accountId), { count: 1, holds: 1 }, 'the unit is held meanwhile')
    } finally {
      sys.workers!.workers.forEach((w) => w.worker.resume())
    }
    const res = await pending!
    assert.equal(res.status, 200, res.text)
    const id = res.headers.get('x-invoice-id')!
    const doc = await getInvoice(sys.platform.db, id)
    assert.deepEqual([doc?.status, doc?.charged, doc?.account_id, doc?.kind], ['done', true, accountId, 'single'])
    assert.equal(doc?.request?.invoice_number, 'Recorded once', 'the request is recorded with it')
    assert.ok(Buffer.from(doc!.pdf!.buffer).equals(res.body), 'the answer is the recorded PDF')
    assert.match(pdfText(res.body), /Recorded once/)
    await until('the hold confirmed', async () => (await counter(accountId)).holds === 0)
    assert.deepEqual(await counter(accountId), { count: 1, holds: 0 })
    // Served again from the record.
    const again = await get(`${sys.url.invoice}/invoices/${id}`, { key })
    assert.equal(again.status, 200)
    assert.ok(again.body.equals(res.body))
  })

  it('a render recorded twice is kept once: the second is skipped and changes nothing', async () => {
    const { accountId } = await signup('record-twice')
    const id = randomId()
    assert.ok(await reserve(sys.platform.db, accountId, period, 5, 1, { id, kind: 'invoice' }))
    const rec = { _id: id, account_id: accountId, kind: 'single' as const, period, created_at: clock.now(), request: request('Twice') }
    // A job object to hand the wake payload to, not added to the queue (the workers would take it).
    const job = new Job(renderQueue(), invoiceRenderContract.queue, { invoice_id: id }, {}, id)
    const results = await Promise.all([0, 1].map(() => renderAndRecord(sys.platform, job, rec, { finalAttempt: true, threads: 1 })))
    assert.deepEqual(results.map((r) => r.state).sort(), ['done', 'skipped'])
    assert.equal(await invoiceSlots(sys.platform.db).countDocuments({ account_id: accountId }), 1)
    assert.equal((await getInvoice(sys.platform.db, id))?.status, 'done')
    assert.deepEqual(await counter(accountId), { count: 1, holds: 1 }, 'charged once (the hold is the waiting request’s to confirm)')
  })

  it('a failed record whose writer died before giving the unit back: the waiter answers its error and gives the unit back, once', async () => {
    const { accountId } = await signup('record-failed')
    const id = randomId()
    assert.ok(await reserve(sys.platform.db, accountId, period, 5, 1, { id, kind: 'invoice' }))
    const rec = { _id: id, account_id: accountId, kind: 'single' as const, period, created_at: clock.now(), request: request('Failed') }
    // What recordFailed leaves when its process dies between the insert and the release.
    await invoices(sys.platform.db, id).insertOne({ ...rec, status: 'failed', charged: true, error: { status: 400, message: 'bad logo' }, updated_at: clock.now(), expires_at: new Date(clock.nowMs() + 86_400_000) })
    const payload = { invoice_id: id, request: rec.request, record: { account_id: accountId, kind: 'single' as const, period, created_at: rec.created_at.toISOString() } }
    await assert.rejects(awaitInvoicePdf(sys.platform, rec, payload, 5_000), (err: HttpError) => err.status === 400 && err.message === 'bad logo')
    assert.equal((await getInvoice(sys.platform.db, id))?.charged, false)
    await until('the hold confirmed', async () => (await counter(accountId)).holds === 0)
    assert.deepEqual(await counter(accountId), { count: 0, holds: 0 })
    await releaseIfFailed(sys.platform.db, id) // the writer, come back, tries too: nothing more is given back
    assert.deepEqual(await counter(accountId), { count: 0, holds: 0 }, 'given back once, not twice')
  })

  it('given up first (timeout), a late render is not kept and the unit is back; given up last, the render stands', async () => {
    const { accountId } = await signup('record-race')
    const [early, late] = [randomId(), randomId()]
    for (const id of [early, late]) assert.ok(await reserve(sys.platform.db, accountId, period, 5, 1, { id, kind: 'invoice' }))
    const rec = (id: string) => ({ _id: id, account_id: accountId, kind: 'single' as const, period, created_at: clock.now(), request: request(id) })
    const timeout = { status: 504, message: 'timed out' }

    assert.equal(await giveUp(sys.platform, rec(early), timeout), true)
    assert.equal(await recordDone(sys.platform.db, rec(early), Buffer.from('%PDF-late'), 1, 30), false)
    const failed = await getInvoice(sys.platform.db, early)
    assert.deepEqual([failed?.status, failed?.charged, failed?.pdf, failed?.error?.status], ['failed', false, undefined, 504])

    assert.equal(await recordDone(sys.platform.db, rec(late), Buffer.from('%PDF-first'), 1, 30), true)
    assert.equal(await giveUp(sys.platform, rec(late), timeout), false, 'recorded meanwhile: that record stands')
    const done = await getInvoice(sys.platform.db, late)
    assert.deepEqual([done?.status, done?.charged], ['done', true])
    assert.equal((await counter(accountId)).count, 1, 'only the rendered one is charged')
  })

  it('a job of an earlier version (invoice stored before its render, no record in the job) is still rendered', async () => {
    const { key, accountId } = await signup('record-legacy')
    const id = randomId()
    assert.ok(await reserve(sys.platform.db, accountId, period, 5))
    const created = clock.now()
    await insertInvoice(sys.platform.db, {
      _id: id, account_id: accountId, kind: 'single', request: request('Stored first'), period, charged: true,
      created_at: created, expires_at: new Date(created.getTime() + 86_400_000),
    })
    await enqueue(sys.platform, invoiceRenderContract, { invoice_id: id })
    const doc = await until('the stored invoice rendered', async () => {
      const d = await getInvoice(sys.platform.db, id)
      return d?.status === 'done' ? d : null
    })
    assert.equal(doc.charged, true)
    const res = await get(`${sys.url.invoice}/invoices/${id}`, { key })
    assert.equal(res.status, 200)
    assert.match(pdfText(res.body), /Stored first/)
    assert.equal((await get(`${sys.url.invoice}/usage`, { key })).json.invoices_this_month, 1)
  })
})
