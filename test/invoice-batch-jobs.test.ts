import assert from 'node:assert/strict'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { Webhook } from 'standardwebhooks'
import { startSystem, type TestSystem } from './helpers/system.ts'
import { getInvoice, invoiceSlots } from '../src/invoice/store/invoice-store.ts'
import { pdfSlots } from '../src/invoice/store/pdf-store.ts'
import { call, get, post } from './helpers/http.ts'
import { clock } from '../src/platform/clock.ts'
import { QueueName } from './helpers/queue-names.ts'
import { invoicesExpireJob } from '../jobs/invoices-expire.ts'
import { account, row, rows, submit, waitFinished } from './helpers/invoice-batch.ts'

interface Received {
  headers: http.IncomingHttpHeaders
  body: string
}

describe('invoice batches: signed completion callback', () => {
  let sys: TestSystem
  let receiver: http.Server
  let receiverUrl: string
  const received: Received[] = []
  before(async () => {
    sys = await startSystem({ services: ['invoice'] })
    receiver = http.createServer((req, res) => {
      const chunks: Buffer[] = []
      req.on('data', (c) => chunks.push(c))
      req.on('end', () => {
        received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') })
        // The first delivery fails: the callback must be retried.
        res.writeHead(received.length === 1 ? 500 : 204).end()
      })
    })
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r))
    receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks/batches?tenant=a`
  })
  after(async () => {
    receiver?.close()
    await sys?.stop()
  })

  it('delivers a Standard Webhooks message that verifies with the batch secret, retrying after a failure', async function () {
    this.timeout(60_000)
    const { key } = await account(sys, 'starter')
    const res = await submit(sys, key, [row(1), row(2)], { query: `?callback_url=${encodeURIComponent(receiverUrl)}` })
    assert.equal(res.status, 202, res.text)
    assert.match(res.json.callback_secret, /^whsec_[A-Za-z0-9+/=]{40,}$/)
    assert.equal(res.json.callback_url, receiverUrl)
    await waitFinished(sys, key, res.json.batch_id)
    const until = Date.now() + 30_000
    while (received.length < 2 && Date.now() < until) await new Promise((r) => setTimeout(r, 100))
    assert.equal(received.length, 2)

    const wh = new Webhook(res.json.callback_secret)
    for (const msg of received) {
      const payload = wh.verify(msg.body, msg.headers as Record<string, string>) as any
      assert.equal(payload.type, 'invoice.batch.finished')
      assert.equal(payload.data.batch_id, res.json.batch_id)
      assert.deepEqual(payload.data.counts, { queued: 0, rendering: 0, done: 2, failed: 0 })
      assert.equal(payload.data.archive_url, res.json.archive_url)
    }
    // Same message id on the retry, so the receiver can drop a duplicate.
    assert.equal(received[0]!.headers['webhook-id'], received[1]!.headers['webhook-id'])
    // A wrong secret or a changed body does not verify.
    assert.throws(() => new Webhook(`whsec_${Buffer.alloc(32, 7).toString('base64')}`).verify(received[1]!.body, received[1]!.headers as any))
    assert.throws(() => wh.verify(received[1]!.body.replace('"done":2', '"done":3'), received[1]!.headers as any))

    let st: any
    for (let i = 0; i < 50; i++) {
      st = (await get(res.json.status_url, { key })).json
      if (st.callback.state === 'delivered') break
      await new Promise((r) => setTimeout(r, 100))
    }
    assert.deepEqual(st.callback, { url: receiverUrl, state: 'delivered', attempts: 2, last_status: 204, last_error: 'receiver answered 500' })
  })
})

describe('invoice batches: callback URL guard', () => {
  let sys: TestSystem
  before(async () => {
    sys = await startSystem({ services: ['invoice'], workers: false, env: { OUTBOUND_ALLOW_PRIVATE: 'false' } })
  })
  after(async () => sys?.stop())

  it('refuses callback URLs that are malformed or point at private addresses, and reserves nothing', async () => {
    const { key } = await account(sys, 'starter')
    for (const [u, msg] of [
      ['http://127.0.0.1:9/x', /private, loopback/],
      ['http://localhost/x', /private, loopback/],
      ['http://[::1]/x', /private, loopback/],
      ['http://169.254.169.254/latest', /private, loopback/],
      ['http://user:pw@example.com/', /credentials/],
      ['not a url', /not valid/],
    ] as const) {
      const r = await submit(sys, key, [row(1)], { query: `?callback_url=${encodeURIComponent(u)}` })
      assert.equal(r.status, 400, u)
      assert.match(r.json.error, msg)
    }
    const twice = await submit(sys, key, [row(1)], { query: '?callback_url=https://a.example/&callback_url=https://b.example/' })
    assert.equal(twice.status, 400)
    assert.equal((await get(`${sys.url.invoice}/usage`, { key })).json.invoices_this_month, 0)
  })
})

describe('invoices-expire: retention of stored invoices, batches and keys', () => {
  let sys: TestSystem
  before(async () => {
    sys = await startSystem({ services: ['invoice'], env: { INVOICE_RETENTION_DAYS: '2' } })
  })
  after(async () => {
    clock.reset()
    await sys?.stop()
  })
  const runExpire = () => invoicesExpireJob.process({}, {} as never, sys.platform) as Promise<any>

  it('is scheduled hourly by the worker', async () => {
    const schedulers = await sys.platform.queues.queue(QueueName.InvoicesExpire).getJobSchedulers()
    assert.deepEqual(schedulers.map((s) => [s.key, s.every]), [['invoices-expire-hourly', 3_600_000]])
  })

  it('keeps everything within retention, removes it after (configurable: 2 days here), and demo invoices after their hour', async () => {
    const { key } = await account(sys, 'starter')
    const res = await submit(sys, key, rows(2))
    const st = await waitFinished(sys, key, res.json.batch_id)
    const single = await call('POST', `${sys.url.invoice}/invoice`, { json: row(5), key, headers: { 'idempotency-key': 'keep-me' } })
    assert.equal(single.status, 200)
    assert.equal((await post(`${sys.url.invoice}/demo-invoice`, row(6))).status, 200)
    const count = () => invoiceSlots(sys.platform.db).countDocuments({})
    const batchPdfs = () => pdfSlots(sys.platform.db).countDocuments({ batch_id: res.json.batch_id })
    assert.equal(await count(), 4)
    assert.equal(await batchPdfs(), 2)
    const stored = (await getInvoice(sys.platform.db, single.headers.get('x-invoice-id')!))!
    assert.equal(stored.expires_at.getTime() - stored.created_at.getTime(), 2 * 86_400_000, "a single invoice's expires_at follows the retention setting")

    clock.advance(2 * 3_600_000)
    assert.equal((await runExpire()).invoices, 1) // the demo invoice only
    assert.equal(await count(), 3)

    clock.advance(36 * 3_600_000) // 38 h: still within 2 days
    const mid = await runExpire()
    assert.equal(mid.invoices, 0)
    assert.equal(mid.idempotency_keys, 1) // the 24 h key
    assert.equal((await get(`${sys.url.invoice}/invoices/${st.rows[0].invoice_id}`, { key })).status, 200)
    assert.equal(await batchPdfs(), 2)

    clock.advance(11 * 3_600_000) // 49 h
    const late = await runExpire()
    assert.deepEqual([late.invoices, late.batches], [3, 1])
    assert.equal(await count(), 0)
    assert.equal(await batchPdfs(), 0, "batch rows' PDFs go with their rows")
    assert.equal((await get(res.json.status_url, { key })).status, 404)
    assert.equal((await get(`${sys.url.invoice}/invoices/${st.rows[0].invoice_id}`, { key })).status, 404)
    assert.equal((await get(`${sys.url.invoice}/invoices/${single.headers.get('x-invoice-id')}`, { key })).status, 404)
    assert.deepEqual(await runExpire().then((r) => [r.invoices, r.batches, r.idempotency_keys]), [0, 0, 0])
  })
})
