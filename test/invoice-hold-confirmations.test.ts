// A single invoice's quota hold is confirmed without a round trip of its own: by the counter's next
// reservation (the same update) or by a flush soon after. Checked on the counter document itself:
// holds confirmed exactly once, holds_n exact even when the sweep confirmed one meanwhile, nothing
// charged twice or given back; and through the API, sequential invoices leave no hold behind.
import assert from 'node:assert/strict'
import { MongoClient } from 'mongodb'
import { clock, monthKey } from '../src/platform/clock.ts'
import { randomId } from '../src/platform/ids.ts'
import { HoldConfirmations } from '../src/invoice/store/hold-confirmations.ts'
import { confirmHold, type UsageDoc } from '../src/invoice/store/quota-store.ts'
import { getInvoice, insertInvoice } from '../src/invoice/store/invoice-store.ts'
import { renderNow } from '../src/invoice/invoice-routes.ts'
import { invoiceBodySchema } from '../src/invoice/invoice-schema.ts'
import type { HttpError } from '../src/platform/http/errors.ts'
import { invoicesAbandonedJob } from '../jobs/invoices-abandoned.ts'
import { enqueue } from '../src/platform/queue/job.ts'
import { call, get, post } from './helpers/http.ts'
import { queuesIdle, startSystem, type TestSystem } from './helpers/system.ts'
import { until } from './helpers/wait.ts'

describe('invoice quota: deferred hold confirmations', function () {
  this.timeout(60_000)
  let sys: TestSystem
  before(async () => {
    sys = await startSystem({ services: ['invoice'], workers: { queues: ['invoice-render', invoicesAbandonedJob.queue] }, env: { RENDER_TIMEOUT_MS: '5000', JOB_LOCK_MS: '3000' } })
  })
  after(async () => sys?.stop())

  const period = monthKey(clock.now())
  const counter = (accountId: string) => sys.platform.db.collection<UsageDoc>('invoice_usage').findOne({ _id: `${accountId}:${period}` })
  const holdsOf = async (accountId: string) => {
    const c = await counter(accountId)
    return { ids: Object.keys(c?.holds ?? {}).sort(), n: c?.holds_n ?? 0, count: c?.count ?? 0 }
  }
  const hold = (id: string) => ({ id, kind: 'invoice' as const })
  const signup = async (name: string) => {
    const email = `${name}-${randomId()}@example.com`.toLowerCase()
    const key = (await post(`${sys.url.invoice}/signup`, { email })).json.api_key as string
    const accountId = (await sys.platform.db.collection('accounts').findOne({ email }))!._id as unknown as string
    return { key, accountId }
  }

  it("confirms a recorded invoice's hold with the counter's next reservation, in the same update", async () => {
    const account = randomId()
    // A flush a minute away: only the next reservation can confirm within this test.
    const c = new HoldConfirmations(sys.platform.db, 60_000)
    const [a, b] = [randomId(), randomId()]
    assert.equal(await c.reserve(account, period, 10, hold(a)), true)
    c.later(account, period, a)
    assert.deepEqual(await holdsOf(account), { ids: [a], n: 1, count: 1 }, 'deferred: still a hold')
    assert.equal(await c.reserve(account, period, 10, hold(b)), true)
    assert.deepEqual(await holdsOf(account), { ids: [b], n: 1, count: 2 }, 'a confirmed and b held by one update')
    c.later(account, period, b)
    await c.close()
    assert.deepEqual(await holdsOf(account), { ids: [], n: 0, count: 2 }, 'closing confirms what is pending')
  })

  it('keeps holds_n exact when the sweep confirmed a pending hold first, and keeps pending ones through a refusal', async () => {
    const account = randomId()
    const c = new HoldConfirmations(sys.platform.db, 60_000)
    const [a, b, d] = [randomId(), randomId(), randomId()]
    assert.equal(await c.reserve(account, period, 3, hold(a)), true)
    c.later(account, period, a)
    assert.equal(await confirmHold(sys.platform.db, account, period, a), true, 'the sweep confirmed it meanwhile')
    assert.equal(await c.reserve(account, period, 3, hold(b)), true)
    assert.deepEqual(await holdsOf(account), { ids: [b], n: 1, count: 2 }, 'not confirmed twice: holds_n is not 0')
    c.later(account, period, b)
    // The stale one was flushed away on its own: b rides along with the next reservation again.
    assert.equal(await c.reserve(account, period, 3, hold(d)), true)
    assert.deepEqual(await holdsOf(account), { ids: [d], n: 1, count: 3 }, 'b confirmed by the reservation of d')
    c.later(account, period, d)
    assert.equal(await c.reserve(account, period, 3, hold(randomId())), false, 'over the limit')
    assert.deepEqual(await holdsOf(account), { ids: [d], n: 1, count: 3 }, 'd still pending after the refusal')
    await c.flush()
    assert.deepEqual(await holdsOf(account), { ids: [], n: 0, count: 3 })
  })

  it('a hold said to be recorded twice is confirmed once: holds_n stays exact, by reservation and by flush', async () => {
    const account = randomId()
    const c = new HoldConfirmations(sys.platform.db, 60_000)
    const [a, b, d] = [randomId(), randomId(), randomId()]
    assert.equal(await c.reserve(account, period, 10, hold(a)), true)
    assert.equal(await c.reserve(account, period, 10, hold(b)), true)
    c.later(account, period, a)
    c.later(account, period, a)
    assert.equal(await c.reserve(account, period, 10, hold(d)), true)
    assert.deepEqual(await holdsOf(account), { ids: [b, d].sort(), n: 2, count: 3 }, 'a confirmed by the reservation, counted once')
    c.later(account, period, b)
    c.later(account, period, b)
    await c.flush()
    assert.deepEqual(await holdsOf(account), { ids: [d], n: 1, count: 3 }, 'b confirmed by the flush, counted once')
  })

  it('MongoDB unreachable at the flush: no error escapes, the hold stays for the sweep', async () => {
    const account = randomId()
    const id = randomId()
    assert.equal(await new HoldConfirmations(sys.platform.db, 60_000).reserve(account, period, 5, hold(id)), true)
    // A connection of its own, closed: every write of this instance fails.
    const client = await MongoClient.connect(sys.env.MONGO_URL!)
    const c = new HoldConfirmations(client.db(sys.platform.db.databaseName), 60_000)
    await client.close()
    c.later(account, period, id)
    for (let i = 0; i < 7; i++) await c.flush() // past its retries: then left to the sweep
    assert.deepEqual(await holdsOf(account), { ids: [id], n: 1, count: 1 })
  })

  it('a process that died with confirmations pending: the sweep keeps its recorded invoices charged', async () => {
    const { key, accountId } = await signup('hold-died')
    const id = randomId()
    const c = new HoldConfirmations(sys.platform.db, 60_000) // never flushed: the process died
    clock.setNow(new Date(Date.now() - 60_000)) // a minute ago, older than the 11 s cutoff
    try {
      assert.equal(await c.reserve(accountId, period, 5, hold(id)), true)
      await insertInvoice(sys.platform.db, {
        _id: id, account_id: accountId, kind: 'single', request: { items: [{ description: 'x', quantity: 1, unit_price: 1 }] } as never,
        period, charged: true, created_at: clock.now(), expires_at: new Date(clock.nowMs() + 86_400_000),
      })
    } finally {
      clock.reset()
    }
    c.later(accountId, period, id)
    await enqueue(sys.platform, invoicesAbandonedJob, {}, { jobId: `died-${id}` })
    await queuesIdle(sys, [invoicesAbandonedJob.queue])
    const after = await holdsOf(accountId)
    assert.deepEqual(after.ids, [], 'the sweep confirmed it')
    assert.equal(after.n, 0)
    // The abandoned invoice itself is failed by the same sweep, which gives its unit back once.
    assert.equal((await get(`${sys.url.invoice}/usage`, { key })).json.invoices_this_month, 0)
    await c.flush() // a late flush finds nothing to confirm and changes nothing
    assert.deepEqual(await holdsOf(accountId), { ids: [], n: 0, count: 0 })
  })

  it('a request slower than the sweep cutoff: the sweep records its invoice failed and gives the unit back, the late render is not kept (504)', async () => {
    const { key, accountId } = await signup('hold-late')
    const id = randomId()
    const c = new HoldConfirmations(sys.platform.db, 60_000)
    clock.setNow(new Date(Date.now() - 60_000)) // reserved a minute ago, older than the 11 s cutoff
    try {
      assert.equal(await c.reserve(accountId, period, 5, hold(id)), true)
    } finally {
      clock.reset()
    }
    await enqueue(sys.platform, invoicesAbandonedJob, {}, { jobId: `late-${id}` })
    await queuesIdle(sys, [invoicesAbandonedJob.queue])
    assert.deepEqual(await holdsOf(accountId), { ids: [], n: 0, count: 0 }, 'recorded failed: hold settled, unit back')
    // The request only now enqueues its render: the worker renders it, but the record is taken.
    const request = invoiceBodySchema.parse({ items: [{ description: 'late', quantity: 1, unit_price: 1 }] })
    await assert.rejects(renderNow(sys.platform, 'single', { accountId, period }, request, id), (err: HttpError) => err.status === 504)
    const doc = await getInvoice(sys.platform.db, id)
    assert.deepEqual([doc?.status, doc?.charged, doc?.pdf], ['failed', false, undefined], 'the render was not kept')
    assert.deepEqual(await holdsOf(accountId), { ids: [], n: 0, count: 0 })
    assert.equal((await get(`${sys.url.invoice}/usage`, { key })).json.invoices_this_month, 0)
  })

  it('sequential POST /invoice: every unit charged once, no hold left behind', async () => {
    const { key, accountId } = await signup('hold-seq')
    for (let i = 0; i < 4; i++) {
      const r = await call('POST', `${sys.url.invoice}/invoice`, { json: { items: [{ description: `Line ${i}`, quantity: 1, unit_price: 10 }] }, key })
      assert.equal(r.status, 200, r.text)
    }
    await until('every hold confirmed', async () => (await holdsOf(accountId)).n === 0, 10_000)
    assert.deepEqual(await holdsOf(accountId), { ids: [], n: 0, count: 4 })
    assert.equal((await get(`${sys.url.invoice}/usage`, { key })).json.invoices_this_month, 4)
  })
})
