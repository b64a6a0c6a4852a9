// Limits under concurrency: the monthly quota and the demo rate limit let exactly the allowed
// number of simultaneous requests through; X-Forwarded-For counts only when TRUST_PROXY=true.
import assert from 'node:assert/strict'
import { startSystem, type TestSystem } from './helpers/system.ts'
import { invoiceSlots } from '../src/invoice/store/invoice-store.ts'
import { get, post } from './helpers/http.ts'
import { qpdfCheck } from './helpers/pdf.ts'

const QUOTA = 'Monthly limit reached. Upgrade your plan to continue.'
const DEMO = 'Rate limit exceeded. Maximum 5 demo requests per minute.'
const body = { items: [{ description: 'Concurrent', quantity: 1, unit_price: 9.99 }] }

function tally(statuses: number[]): Record<number, number> {
  const t: Record<number, number> = {}
  for (const s of statuses) t[s] = (t[s] ?? 0) + 1
  return t
}

describe('invoice limits under concurrency', () => {
  let sys: TestSystem
  let base: string
  before(async () => {
    sys = await startSystem({ services: ['invoice'], workers: { concurrency: 4 } })
    base = sys.url.invoice!
  })
  after(async () => sys?.stop())

  it('30 concurrent POST /invoice on a free account: exactly 5 PDFs and 25 × 429; usage shows 5', async () => {
    const key = (await post(`${base}/signup`, { email: 'burst@example.com' })).json.api_key
    const all = await Promise.all(Array.from({ length: 30 }, () => post(`${base}/invoice`, body, { key })))
    assert.deepEqual(tally(all.map((r) => r.status)), { 200: 5, 429: 25 })
    for (const r of all.filter((r) => r.status === 200)) {
      assert.equal(r.headers.get('content-type'), 'application/pdf')
      qpdfCheck(r.body)
    }
    for (const r of all.filter((r) => r.status === 429)) {
      assert.deepEqual(r.json, { error: QUOTA })
      assert.ok(Number(r.headers.get('retry-after')) > 0)
    }
    const usage = await get(`${base}/usage`, { key })
    assert.deepEqual(usage.json, { plan: 'free', invoices_this_month: 5, monthly_limit: 5, remaining: 0 })
    const acc = await sys.platform.db.collection('accounts').findOne({ email: 'burst@example.com' })
    assert.equal(await invoiceSlots(sys.platform.db).countDocuments({ account_id: String(acc!._id), status: 'done' }), 5)
  })

  it('two accounts bursting at once do not share a quota', async () => {
    const [a, b] = await Promise.all(['a-burst@example.com', 'b-burst@example.com'].map(async (email) => (await post(`${base}/signup`, { email })).json.api_key))
    const all = await Promise.all([...Array(8).fill(a), ...Array(8).fill(b)].map((key) => post(`${base}/invoice`, body, { key })))
    assert.deepEqual(tally(all.slice(0, 8).map((r) => r.status)), { 200: 5, 429: 3 })
    assert.deepEqual(tally(all.slice(8).map((r) => r.status)), { 200: 5, 429: 3 })
  })

  it('10 concurrent demo requests from one IP: exactly 5 succeed, 5 get 429 with Retry-After', async () => {
    const all = await Promise.all(Array.from({ length: 10 }, () => post(`${base}/demo-invoice`, body)))
    assert.deepEqual(tally(all.map((r) => r.status)), { 200: 5, 429: 5 })
    for (const r of all.filter((r) => r.status === 429)) {
      assert.deepEqual(r.json, { error: DEMO })
      const retry = Number(r.headers.get('retry-after'))
      assert.ok(retry >= 1 && retry <= 60, `Retry-After ${retry}`)
    }
    for (const r of all.filter((r) => r.status === 200)) assert.equal(r.headers.get('content-disposition'), 'attachment; filename="demo.pdf"')
  })

  it('X-Forwarded-For is ignored without TRUST_PROXY: a spoofed header does not buy a new budget', async () => {
    // The budget of 127.0.0.1 was used by the test above.
    const spoofed = await post(`${base}/demo-invoice`, body, { headers: { 'x-forwarded-for': '203.0.113.77' } })
    assert.equal(spoofed.status, 429)
    assert.deepEqual(spoofed.json, { error: DEMO })
  })

  describe('with TRUST_PROXY=true', () => {
    let proxied: TestSystem
    before(async () => {
      proxied = await startSystem({ services: ['invoice'], workers: { concurrency: 4 }, env: { TRUST_PROXY: 'true' } })
    })
    after(async () => proxied?.stop())

    it('distinct forwarded client IPs get separate budgets of 5', async () => {
      const url = `${proxied.url.invoice}/demo-invoice`
      const ips = ['198.51.100.1', '198.51.100.2']
      const all = await Promise.all(ips.flatMap((ip) => Array.from({ length: 7 }, () => post(url, body, { headers: { 'x-forwarded-for': ip } }))))
      assert.deepEqual(tally(all.slice(0, 7).map((r) => r.status)), { 200: 5, 429: 2 })
      assert.deepEqual(tally(all.slice(7).map((r) => r.status)), { 200: 5, 429: 2 })
      // The left-most address is the client; proxies append theirs.
      const chained = await post(url, body, { headers: { 'x-forwarded-for': '198.51.100.1, 10.0.0.5' } })
      assert.equal(chained.status, 429)
    })
  })
})
