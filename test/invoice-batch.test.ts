import assert from 'node:assert/strict'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { startSystem, type TestSystem } from './helpers/system.ts'
import { invoices, invoiceSlots } from '../src/invoice/store/invoice-store.ts'
import { call, get } from './helpers/http.ts'
import { pdfText, qpdfCheck } from './helpers/pdf.ts'
import { pdfs } from '../src/invoice/store/pdf-store.ts'
import { account, row, rows, submit, submitNdjson, unzip, usage, waitFinished } from './helpers/invoice-batch.ts'

describe('invoice batches: POST /invoices/batch, status, stored invoices, archive', () => {
  let sys: TestSystem
  let logoServer: http.Server
  let notAnImage: string
  before(async () => {
    sys = await startSystem({ services: ['invoice'] })
    logoServer = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('not an image'))
    await new Promise<void>((r) => logoServer.listen(0, '127.0.0.1', r))
    notAnImage = `http://127.0.0.1:${(logoServer.address() as AddressInfo).port}/logo.png`
  })
  after(async () => {
    logoServer?.close()
    await sys?.stop()
  })

  it('renders a JSON batch: 202, status with per-row states, each PDF by id, a ZIP with one valid PDF per row', async () => {
    const { key } = await account(sys, 'starter')
    const res = await submit(sys, key, [row(1), row(2), row(3, { currency_symbol: '€', to: { name: 'Zoë Łukasz 中文' } })])
    assert.equal(res.status, 202, res.text)
    assert.match(res.json.batch_id, /^[0-9A-Za-z]{22}$/)
    assert.equal(res.json.total, 3)
    assert.equal(res.json.status_url, `${sys.url.invoice}/invoices/batch/${res.json.batch_id}`)
    assert.equal(res.headers.get('location'), res.json.status_url)
    assert.equal(res.json.callback_secret, undefined)

    const st = await waitFinished(sys, key, res.json.batch_id)
    assert.deepEqual(st.counts, { queued: 0, rendering: 0, done: 3, failed: 0 })
    assert.deepEqual(st.rows.map((r: any) => [r.row, r.state, r.error]), [[0, 'done', null], [1, 'done', null], [2, 'done', null]])
    assert.equal(await usage(sys, key), 3)

    const pdf = await get(`${sys.url.invoice}/invoices/${st.rows[2].invoice_id}`, { key })
    assert.equal(pdf.status, 200)
    assert.equal(pdf.headers.get('content-type'), 'application/pdf')
    qpdfCheck(pdf.body)
    assert.match(pdfText(pdf.body), /Zoë Łukasz 中文/)

    const zip = await get(st.archive_url, { key })
    assert.equal(zip.status, 200)
    assert.equal(zip.headers.get('content-type'), 'application/zip')
    const entries = unzip(zip.body)
    assert.deepEqual(entries.map((e) => e.name), ['0001-INV-1001.pdf', '0002-INV-1002.pdf', '0003-INV-1003.pdf'])
    for (const e of entries) qpdfCheck(e.data)
    assert.match(pdfText(entries[1]!.data), /INV-1002[\s\S]*Service 2/)
  })

  it('accepts NDJSON; a failing row is reported, releases its unit, and does not fail the batch', async () => {
    const { key } = await account(sys, 'starter')
    const lines = [JSON.stringify(row(1)), '', JSON.stringify(row(2, { logo_url: notAnImage })), JSON.stringify(row(3))]
    const res = await submitNdjson(sys, key, lines)
    assert.equal(res.status, 202, res.text)
    assert.equal(res.json.total, 3)
    const st = await waitFinished(sys, key, res.json.batch_id)
    assert.deepEqual(st.counts, { queued: 0, rendering: 0, done: 2, failed: 1 })
    assert.equal(st.rows[1].state, 'failed')
    assert.match(st.rows[1].error, /image|PNG|JPEG/i)
    assert.equal(await usage(sys, key), 2)
    const failed = await get(`${sys.url.invoice}/invoices/${st.rows[1].invoice_id}`, { key })
    assert.equal(failed.status, 409)
    assert.match(failed.json.error, /could not be rendered/)
    const entries = unzip((await get(st.archive_url, { key })).body)
    assert.deepEqual(entries.map((e) => e.name), ['0001-INV-1001.pdf', '0003-INV-1003.pdf'])
    for (const e of entries) qpdfCheck(e.data)
  })

  it('validates every row first: a per-row report, nothing stored, nothing counted', async () => {
    const { key } = await account(sys, 'starter')
    const bad = [row(0), { items: [{ description: 'x', quantity: 0, unit_price: 1 }] }, 'not an object', row(3, { tax_rate: 500 })]
    const res = await submit(sys, key, bad)
    assert.equal(res.status, 400)
    assert.match(res.json.error, /^rows\[1\]\.items\[0\]\.quantity must be > 0/)
    assert.deepEqual(res.json.errors, [
      'rows[1].items[0].quantity must be > 0',
      'rows[2]: items is required and must be a non-empty array',
      'rows[3].tax_rate must be <= 100',
    ])
    assert.equal(res.json.invalid_rows, 3)
    assert.equal(await usage(sys, key), 0)
    assert.equal(await sys.platform.db.collection('invoice_batches').countDocuments({}), 2) // the two earlier tests' batches only
  })

  it('answers bad bodies with a clear 4xx and changes nothing', async () => {
    const { key } = await account(sys, 'starter')
    const url = `${sys.url.invoice}/invoices/batch`
    const cases: [string, Parameters<typeof call>[2], number, RegExp][] = [
      ['malformed JSON', { raw: '[{"items": [', key }, 400, /Malformed JSON/],
      ['not an array', { json: row(1), key }, 400, /JSON array/],
      ['empty array', { json: [], key }, 400, /at least one invoice/],
      ['empty body', { raw: '', key }, 400, /empty|at least one/],
      ['too many rows', { json: Array.from({ length: 1001 }, () => ({ items: [{ description: 'a', quantity: 1, unit_price: 1 }] })), key }, 400, /at most 1000 invoices/],
      ['bad NDJSON line', { raw: `${JSON.stringify(row(1))}\n{oops\n`, key, headers: { 'content-type': 'application/x-ndjson' } }, 400, /rows\[1\] \(line 2\) is not valid JSON/],
      ['wrong content type', { raw: 'a,b,c', key, headers: { 'content-type': 'text/csv' } }, 415, /application\/x-ndjson/],
      ['gzip body', { raw: 'xx', key, headers: { 'content-encoding': 'gzip' } }, 415, /encoding/],
      ['huge numbers', { json: [row(1, { items: [{ description: 'a', quantity: 1e300, unit_price: 1 }] })], key }, 400, /rows\[0\]\.items\[0\]\.quantity must be <=/],
      ['wrong types', { json: [{ items: 'many' }], key }, 400, /rows\[0\]: items is required/],
      ['callback not http', { json: [row(1)], key }, 400, /callback_url: URL must use http or https/],
      ['no key', { json: [row(1)] }, 401, /Unauthorized/],
    ]
    for (const [name, opts, status, msg] of cases) {
      const target = name === 'callback not http' ? `${url}?callback_url=${encodeURIComponent('ftp://example.com/x')}` : url
      const r = await call('POST', target, opts)
      assert.equal(r.status, status, `${name}: ${r.text}`)
      assert.match(r.json?.error ?? '', msg, name)
    }
    const big = await call('POST', url, { raw: Buffer.alloc(33 * 1024 * 1024, 0x20), key })
    assert.equal(big.status, 413)
    assert.equal(await usage(sys, key), 0)
  })

  it('reserves the quota for the whole batch or not at all, saying how many remain', async () => {
    const { key } = await account(sys) // free: 5
    const over = await submit(sys, key, rows(6))
    assert.equal(over.status, 429)
    assert.match(over.json.error, /needs 6 invoices but only 5 remain/)
    assert.equal(over.json.remaining, 5)
    assert.ok(Number(over.headers.get('retry-after')) > 0)
    assert.equal(await usage(sys, key), 0)
    const ok = await submit(sys, key, rows(5))
    assert.equal(ok.status, 202, ok.text)
    const again = await submit(sys, key, rows(1))
    assert.equal(again.status, 429)
    assert.equal(again.json.remaining, 0)
    await waitFinished(sys, key, ok.json.batch_id)
    assert.equal(await usage(sys, key), 5)
  })

  it("keeps tenants apart: another account's batch, archive and invoice are 404", async () => {
    const a = await account(sys, 'starter')
    const b = await account(sys, 'starter')
    const res = await submit(sys, a.key, rows(1))
    const st = await waitFinished(sys, a.key, res.json.batch_id)
    for (const path of [`/invoices/batch/${res.json.batch_id}`, `/invoices/batch/${res.json.batch_id}/archive`, `/invoices/${st.rows[0].invoice_id}`]) {
      const r = await get(`${sys.url.invoice}${path}`, { key: b.key })
      assert.equal(r.status, 404, path)
      assert.equal(typeof r.json.error, 'string')
    }
    assert.equal((await get(`${sys.url.invoice}/invoices/batch/nope`, { key: a.key })).status, 404)
    assert.equal((await get(`${sys.url.invoice}/invoices/${'x'.repeat(22)}`, { key: a.key })).status, 404)
    assert.equal((await get(`${sys.url.invoice}/invoices/bad%20id`, { key: a.key })).status, 400)
    assert.equal((await get(`${sys.url.invoice}/invoices/${st.rows[0].invoice_id}`)).status, 401)
  })

  it('serves a single invoice by id too (X-Invoice-Id)', async () => {
    const { key } = await account(sys)
    const one = await call('POST', `${sys.url.invoice}/invoice`, { json: row(7), key })
    assert.equal(one.status, 200)
    const id = one.headers.get('x-invoice-id')!
    const again = await get(`${sys.url.invoice}/invoices/${id}`, { key })
    assert.equal(again.status, 200)
    assert.ok(again.body.equals(one.body))
  })

  it('serves a single POST /invoice beside a running batch, not behind it', async function () {
    this.timeout(180_000)
    const { key } = await account(sys, 'pro')
    const res = await submit(sys, key, rows(80))
    assert.equal(res.status, 202)
    const rendering = async () => (await get(res.json.status_url, { key })).json.counts.rendering as number
    while ((await rendering()) === 0) await new Promise((r) => setTimeout(r, 20))
    const single = await call('POST', `${sys.url.invoice}/invoice`, { json: row(999), key })
    const answered = new Date()
    assert.equal(single.status, 200)
    await waitFinished(sys, key, res.json.batch_id, 170_000)
    // Each batch row's PDF records when its render finished; the single's record when its render
    // finished and how long it spent in the thread pool (waiting + rendering). While the single was
    // in the pool, only the batch renders already there could finish (one per chunk job: 3 with the
    // default 2 threads) and one or two beside its own render: the pool never holds a chunk's rows
    // ahead of it. (Its way there, HTTP + MongoDB + Redis, is left out: on a busy machine rows
    // finish at any rate meanwhile; `later` below shows it did not wait for the batch.)
    const singleId = single.headers.get('x-invoice-id')!
    const doc = await invoices(sys.platform.db, singleId).findOne({ _id: singleId })
    const poolLeft = doc!.updated_at as Date
    const poolEntered = new Date(poolLeft.getTime() - (doc!.render_ms as number) - 1)
    const rendered = (range: object) => pdfs(sys.platform.db, res.json.batch_id).countDocuments({ batch_id: res.json.batch_id, rendered_at: range })
    const during = await rendered({ $gte: poolEntered, $lte: poolLeft })
    assert.ok(during <= 5, `batch rows rendered while the single was in the thread pool: ${during}`)
    const later = await rendered({ $gt: answered })
    // Queued behind the batch it would be 0; a busy machine slows its way to the pool, not the rows.
    assert.ok(later >= 20, `batch rows rendered after the single: ${later} of 80`)
  })
})

describe('invoice batches without workers: unfinished batches and racing for quota', () => {
  let sys: TestSystem
  before(async () => {
    sys = await startSystem({ services: ['invoice'], workers: false })
  })
  after(async () => sys?.stop())

  it('a batch that is still rendering: status counts queued rows, archive 409, invoice 409', async () => {
    const { key } = await account(sys, 'starter')
    const res = await submit(sys, key, rows(3))
    assert.equal(res.status, 202)
    const st = await get(res.json.status_url, { key })
    assert.equal(st.json.status, 'processing')
    assert.deepEqual(st.json.counts, { queued: 3, rendering: 0, done: 0, failed: 0 })
    assert.equal(st.json.finished_at, null)
    const zip = await get(res.json.archive_url, { key })
    assert.equal(zip.status, 409)
    assert.match(zip.json.error, /not finished yet \(0 of 3 rows finished\)/)
    const inv = await get(`${sys.url.invoice}/invoices/${st.json.rows[0].invoice_id}`, { key })
    assert.equal(inv.status, 409)
    assert.match(inv.json.error, /not ready yet \(state: queued\)/)
  })

  it('concurrent batches racing for the last units: exactly the ones that fit are accepted', async () => {
    const { key } = await account(sys, 'starter') // 100
    const results = await Promise.all(Array.from({ length: 6 }, () => submit(sys, key, rows(30))))
    const accepted = results.filter((r) => r.status === 202)
    const refused = results.filter((r) => r.status === 429)
    assert.equal(accepted.length, 3)
    assert.equal(refused.length, 3)
    assert.equal(await usage(sys, key), 90)
    const stored = await invoiceSlots(sys.platform.db).countDocuments({ kind: 'batch', account_id: { $exists: true } })
    assert.equal(stored, 3 * 30 + 3) // plus the previous test's 3 rows
    const last = await submit(sys, key, rows(10))
    assert.equal(last.status, 202)
    const none = await submit(sys, key, rows(1))
    assert.equal(none.status, 429)
    assert.equal(none.json.remaining, 0)
  })
})
