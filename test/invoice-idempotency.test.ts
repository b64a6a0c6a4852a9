import assert from 'node:assert/strict'
import { startSystem, type TestSystem } from './helpers/system.ts'
import { invoiceSlots } from '../src/invoice/store/invoice-store.ts'
import { call, get } from './helpers/http.ts'
import { rawRequest } from './helpers/raw-http.ts'
import { qpdfCheck } from './helpers/pdf.ts'
import { clock } from '../src/platform/clock.ts'
import { setPlan } from '../src/platform/accounts.ts'
import { account, row, rows, submit, usage, waitFinished } from './helpers/invoice-batch.ts'

describe('Idempotency-Key on POST /invoice and POST /invoices/batch', () => {
  let sys: TestSystem
  before(async () => {
    sys = await startSystem({ services: ['invoice'] })
  })
  after(async () => {
    clock.reset()
    await sys?.stop()
  })
  const invoice = (key: string, body: unknown, idem?: string) =>
    call('POST', `${sys.url.invoice}/invoice`, { json: body, key, headers: idem ? { 'idempotency-key': idem } : {} })

  it('POST /invoice: a repeat returns the same PDF without counting again', async () => {
    const { key } = await account(sys)
    const first = await invoice(key, row(1), 'order-1')
    assert.equal(first.status, 200, first.text)
    qpdfCheck(first.body)
    // Same body with keys in another order and other whitespace is the same request.
    const again = await call('POST', `${sys.url.invoice}/invoice`, {
      raw: JSON.stringify({ items: row(1).items, to: row(1).to, invoice_number: row(1).invoice_number }, null, 2),
      key,
      headers: { 'idempotency-key': 'order-1' },
    })
    assert.equal(again.status, 200)
    assert.equal(again.headers.get('idempotent-replayed'), 'true')
    assert.equal(again.headers.get('x-invoice-id'), first.headers.get('x-invoice-id'))
    assert.ok(again.body.equals(first.body))
    assert.equal(await usage(sys, key), 1)
  })

  it('POST /invoice: the same key with a different body is a 409 and changes nothing', async () => {
    const { key } = await account(sys)
    assert.equal((await invoice(key, row(1), 'k-409')).status, 200)
    const other = await invoice(key, row(2), 'k-409')
    assert.equal(other.status, 409)
    assert.match(other.json.error, /different request body/)
    assert.equal(await usage(sys, key), 1)
  })

  it('POST /invoice: concurrent duplicates render and count once', async () => {
    const { key, id } = await account(sys)
    const results = await Promise.all(Array.from({ length: 6 }, () => invoice(key, row(3), 'same-time')))
    for (const r of results) assert.equal(r.status, 200, r.text)
    assert.equal(new Set(results.map((r) => r.headers.get('x-invoice-id'))).size, 1)
    assert.equal(await usage(sys, key), 1)
    assert.equal(await invoiceSlots(sys.platform.db).countDocuments({ account_id: id }), 1)
  })

  it('keys are per account, and without a key every request counts', async () => {
    const a = await account(sys)
    const b = await account(sys)
    const ra = await invoice(a.key, row(1), 'shared-key')
    const rb = await invoice(b.key, row(1), 'shared-key')
    assert.equal(rb.headers.get('idempotent-replayed'), null)
    assert.notEqual(ra.headers.get('x-invoice-id'), rb.headers.get('x-invoice-id'))
    await invoice(a.key, row(1))
    await invoice(a.key, row(1))
    assert.equal(await usage(sys, a.key), 3)
    assert.equal(await usage(sys, b.key), 1)
  })

  it('a refused request frees its key: after a 429 the same key can succeed later', async () => {
    const { key, id } = await account(sys)
    for (let i = 0; i < 5; i++) assert.equal((await invoice(key, row(i))).status, 200)
    const refused = await invoice(key, row(9), 'after-upgrade')
    assert.equal(refused.status, 429)
    await setPlan(sys.platform.db, id, 'starter')
    const ok = await invoice(key, row(9), 'after-upgrade')
    assert.equal(ok.status, 200)
    assert.equal(ok.headers.get('idempotent-replayed'), null)
    assert.equal(await usage(sys, key), 6)
  })

  it('rejects malformed keys with a 400', async () => {
    const { key } = await account(sys)
    for (const bad of ['has space', 'x'.repeat(256)]) {
      const r = await call('POST', `${sys.url.invoice}/invoice`, { json: row(1), key, headers: { 'idempotency-key': bad } })
      assert.equal(r.status, 400, bad)
      assert.match(r.json.error, /Idempotency-Key must be/)
    }
    // fetch refuses non-ASCII header values itself: a raw socket sends them as a client could.
    const url = `${sys.url.invoice}/invoice`
    const body = JSON.stringify(row(1))
    const head = [`POST ${new URL(url).pathname} HTTP/1.1`, `Host: ${new URL(url).host}`, `Authorization: Bearer ${key}`, 'Content-Type: application/json', `Content-Length: ${Buffer.byteLength(body)}`]
    for (const bad of ['ünï', 'key\u00a0with-nbsp']) {
      const r = await rawRequest(url, [...head, `Idempotency-Key: ${bad}`], body)
      assert.equal(r.status, 400, bad)
      assert.match(JSON.parse(r.body.toString()).error, /Idempotency-Key must be/)
    }
    assert.equal(await usage(sys, key), 0)
  })

  it('POST /invoices/batch: a repeat returns the same batch; a different body is a 409; concurrent repeats reserve once', async () => {
    const { key } = await account(sys, 'starter')
    const headers = { 'idempotency-key': 'batch-1' }
    const results = await Promise.all(Array.from({ length: 4 }, () => submit(sys, key, rows(4), { headers })))
    for (const r of results) assert.equal(r.status, 202, r.text)
    assert.equal(new Set(results.map((r) => r.json.batch_id)).size, 1)
    assert.equal(await usage(sys, key), 4)
    const other = await submit(sys, key, rows(5), { headers })
    assert.equal(other.status, 409)
    const st = await waitFinished(sys, key, results[0]!.json.batch_id)
    assert.equal(st.counts.done, 4)
    const late = await submit(sys, key, rows(4), { headers })
    assert.equal(late.status, 202)
    assert.equal(late.json.batch_id, results[0]!.json.batch_id)
    assert.equal(late.json.status, 'finished')
    assert.equal(await usage(sys, key), 4)
    assert.equal(await sys.platform.db.collection('invoice_batches').countDocuments({ account_id: { $exists: true }, total: 4 }), 1)
  })

  it('a key is remembered for 24 hours, then it is a new request', async () => {
    const { key } = await account(sys)
    const first = await invoice(key, row(1), 'daily')
    clock.advance(23 * 3_600_000)
    const within = await invoice(key, row(1), 'daily')
    assert.equal(within.headers.get('x-invoice-id'), first.headers.get('x-invoice-id'))
    clock.advance(2 * 3_600_000)
    const after = await invoice(key, row(1), 'daily')
    assert.equal(after.status, 200)
    assert.notEqual(after.headers.get('x-invoice-id'), first.headers.get('x-invoice-id'))
    clock.reset()
    assert.equal(await usage(sys, key), 2)
    const stored = await get(`${sys.url.invoice}/invoices/${first.headers.get('x-invoice-id')}`, { key })
    assert.equal(stored.status, 200)
  })
})
