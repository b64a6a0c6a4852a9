// Month rollover with the injected clock: a new UTC month starts at 0 without any job running, and
// the usage-reset job (run through its real queue) prunes old counters idempotently.
import assert from 'node:assert/strict'
import { setTimeout as sleep } from 'node:timers/promises'
import { queuesIdle, startSystem, type TestSystem } from './helpers/system.ts'
import { get, post } from './helpers/http.ts'
import { clock } from '../src/platform/clock.ts'
import { enqueue } from '../src/platform/queue/job.ts'
import { QueueName } from './helpers/queue-names.ts'
import { usageResetJob } from '../jobs/usage-reset.ts'

const body = { items: [{ description: 'Monthly', quantity: 1, unit_price: 1 }] }

describe('invoice quota: month rollover', () => {
  let sys: TestSystem
  let base: string
  let key: string
  before(async () => {
    sys = await startSystem({ services: ['invoice'] })
    base = sys.url.invoice!
    key = (await post(`${base}/signup`, { email: 'rollover@example.com' })).json.api_key
    await queuesIdle(sys, [QueueName.InvoicesExpire, QueueName.UsageReset])
  })
  after(async () => {
    clock.reset()
    await sys?.stop()
  })

  const usage = async () => (await get(`${base}/usage`, { key })).json

  it('a full quota on 31 January is a fresh quota one second after midnight UTC on 1 February', async () => {
    clock.setNow(new Date('2026-01-31T23:59:00.000Z'))
    for (let i = 0; i < 5; i++) assert.equal((await post(`${base}/invoice`, body, { key })).status, 200)
    const refused = await post(`${base}/invoice`, body, { key })
    assert.equal(refused.status, 429)
    assert.equal(refused.headers.get('retry-after'), '60', 'seconds until the month ends')
    assert.equal((await usage()).invoices_this_month, 5)

    clock.setNow(new Date('2026-02-01T00:00:01.000Z'))
    assert.deepEqual(await usage(), { plan: 'free', invoices_this_month: 0, monthly_limit: 5, remaining: 5 })
    assert.equal((await post(`${base}/invoice`, body, { key })).status, 200)
    assert.equal((await usage()).invoices_this_month, 1)

    // Back in January (a late request, or a clock read just before midnight), January stays full.
    clock.setNow(new Date('2026-01-31T23:59:59.999Z'))
    assert.equal((await usage()).invoices_this_month, 5)
  })

  it('months are UTC: 23:30 on 31 March in New York is already April', async () => {
    clock.setNow(new Date('2026-04-01T03:30:00.000Z')) // 2026-03-31 23:30 in UTC−4
    assert.equal((await usage()).invoices_this_month, 0)
  })

  it('the usage-reset job is scheduled for 00:00 UTC on the 1st', async () => {
    const schedulers = await sys.platform.queues.queue(QueueName.UsageReset).getJobSchedulers()
    const s = schedulers.find((x) => x.key === 'usage-reset-monthly' || x.id === 'usage-reset-monthly')
    assert.ok(s, JSON.stringify(schedulers))
    assert.equal(s.pattern, '0 0 1 * *')
    assert.equal(s.tz, 'UTC')
  })

  it('the usage-reset job prunes counters older than a year, keeps the rest, and is idempotent', async () => {
    const col = sys.platform.db.collection('invoice_usage')
    const acc = await sys.platform.db.collection('accounts').findOne({ email: 'rollover@example.com' })
    for (const period of ['2025-01', '2025-12', '2026-02', '2026-03', '2027-02']) {
      await col.updateOne({ _id: `${acc!._id}:${period}` as any }, { $set: { account_id: acc!._id, period, count: 3 } }, { upsert: true })
    }
    clock.setNow(new Date('2027-03-01T00:00:00.000Z'))
    const runJob = async () => {
      const job = await enqueue(sys.platform, usageResetJob, {})
      for (let i = 0; i < 400; i++) {
        const state = await job.getState()
        if (state === 'completed' || state === 'failed') break
        await sleep(50)
      }
      const done = await sys.platform.queues.queue(QueueName.UsageReset).getJob(job.id!)
      assert.equal(await done!.getState(), 'completed', done?.failedReason)
      return done!.returnvalue as { pruned: number; keepFrom: string }
    }
    const first = await runJob()
    assert.deepEqual(first, { pruned: 4, keepFrom: '2026-03' }) // 2025-01, 2025-12, 2026-01, 2026-02
    const periods = (await col.find({ account_id: acc!._id }).toArray()).map((d) => d.period).sort()
    assert.deepEqual(periods, ['2026-03', '2027-02'])
    const second = await runJob()
    assert.deepEqual(second, { pruned: 0, keepFrom: '2026-03' })
    assert.deepEqual((await col.find({ account_id: acc!._id }).toArray()).map((d) => d.period).sort(), ['2026-03', '2027-02'])
    // The current month is untouched by the job: still readable as 0 until something is charged.
    assert.equal((await usage()).invoices_this_month, 0)
  })
})
