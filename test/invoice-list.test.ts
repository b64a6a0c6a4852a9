// GET /invoices (the account's invoices: filters, stable cursor pages), GET /invoices/batch (the
// account's batches with their progress), tenant isolation and refused input, on a real system.
import assert from 'node:assert/strict'
import { startSystem, type TestSystem } from './helpers/system.ts'
import { call, get, post } from './helpers/http.ts'
import { account, submit, waitFinished } from './helpers/invoice-batch.ts'
import { invoices, type InvoiceDoc } from '../src/invoice/store/invoice-store.ts'
import { randomId } from '../src/platform/ids.ts'

const item = { description: 'Widget', quantity: 1, unit_price: 10 }

/** Stored invoices as the worker records them, for pages bigger than a test should render. */
async function seed(sys: TestSystem, accountId: string, n: number, opts: { at: (i: number) => Date; extra?: (i: number) => Partial<InvoiceDoc> }): Promise<string[]> {
  const ids: string[] = []
  for (let i = 0; i < n; i++) {
    const id = randomId()
    ids.push(id)
    const created = opts.at(i)
    await invoices(sys.platform.db, id).insertOne({
      _id: id,
      account_id: accountId,
      kind: 'single',
      status: 'done',
      request: { items: [item], invoice_number: `SEED-${i}` },
      period: '2026-11',
      charged: true,
      created_at: created,
      updated_at: created,
      expires_at: new Date(created.getTime() + 86_400_000 * 30),
      size_bytes: 1000,
      ...opts.extra?.(i),
    } as InvoiceDoc)
  }
  return ids
}

async function all(sys: TestSystem, key: string, query: string, limit: number): Promise<any[]> {
  const out: any[] = []
  let before: string | null = null
  for (let pages = 0; pages < 100; pages++) {
    const r = await get(`${sys.url.invoice}/invoices?limit=${limit}${query}${before ? `&before=${before}` : ''}`, { key })
    assert.equal(r.status, 200, r.text)
    assert.ok(r.json.invoices.length <= limit)
    out.push(...r.json.invoices)
    before = r.json.next_before
    if (!before) return out
  }
  throw new Error('more than 100 pages')
}

describe('invoice service: GET /invoices and GET /invoices/batch', function () {
  this.timeout(120_000)
  let sys: TestSystem
  before(async () => {
    sys = await startSystem({ services: ['invoice'] })
  })
  after(async () => sys?.stop())

  it('lists what POST /invoice and a batch made, newest first, each downloadable', async () => {
    const { key } = await account(sys, 'pro')
    const a = await post(`${sys.url.invoice}/invoice`, { items: [item], invoice_number: 'A-1', to: { name: 'Globex', email: 'ap@globex.test' }, date: '2026-11-01', currency: 'EUR' }, { key })
    assert.equal(a.status, 200, a.text)
    const b = await post(`${sys.url.invoice}/invoice`, { items: [item], invoice_number: 'A-2', to: { name: 'Initech' } }, { key })
    assert.equal(b.status, 200, b.text)
    const batch = await submit(sys, key, [{ items: [item], invoice_number: 'B-1' }, { items: [item], invoice_number: 'B-2' }])
    assert.equal(batch.status, 202, batch.text)
    await waitFinished(sys, key, batch.json.batch_id)

    const r = await get(`${sys.url.invoice}/invoices`, { key })
    assert.equal(r.status, 200, r.text)
    assert.equal(r.headers.get('cache-control'), 'no-store')
    assert.equal(r.json.next_before, null)
    const numbers = r.json.invoices.map((i: any) => i.invoice_number)
    // The batch's rows share its creation time (ties by id), and are newer than both singles.
    assert.deepEqual(numbers.slice(2), ['A-2', 'A-1'])
    assert.deepEqual(new Set(numbers.slice(0, 2)), new Set(['B-1', 'B-2']))
    const first = r.json.invoices.find((i: any) => i.invoice_number === 'A-1')
    assert.deepEqual(
      { ...first, created_at: undefined, size_bytes: undefined },
      {
        invoice_id: a.headers.get('x-invoice-id'),
        kind: 'single',
        batch_id: null,
        row: null,
        status: 'done',
        invoice_number: 'A-1',
        recipient: { name: 'Globex', email: 'ap@globex.test' },
        date: '2026-11-01',
        due_date: null,
        currency: 'EUR',
        format: 'pdf',
        error: null,
        created_at: undefined,
        size_bytes: undefined,
        download_url: `/api/v1/invoices/${a.headers.get('x-invoice-id')}`,
      },
    )
    assert.equal(first.size_bytes, a.body.length)
    const again = await get(`${sys.root.invoice}${first.download_url}`, { key })
    assert.equal(again.status, 200)
    assert.deepEqual(again.body, a.body)
    const row = r.json.invoices.find((i: any) => i.invoice_number === 'B-2')
    assert.equal(row.kind, 'batch')
    assert.equal(row.batch_id, batch.json.batch_id)
    assert.equal(row.row, 1)

    const singles = await get(`${sys.url.invoice}/invoices?kind=single`, { key })
    assert.deepEqual(singles.json.invoices.map((i: any) => i.invoice_number), ['A-2', 'A-1'])

    const list = await get(`${sys.url.invoice}/invoices/batch`, { key })
    assert.equal(list.status, 200, list.text)
    assert.equal(list.json.batches.length, 1)
    const [bl] = list.json.batches
    assert.equal(bl.batch_id, batch.json.batch_id)
    assert.equal(bl.status, 'finished')
    assert.equal(bl.total, 2)
    assert.deepEqual(bl.counts, { queued: 0, rendering: 0, done: 2, failed: 0 })
    assert.equal(bl.archive_url, batch.json.archive_url)
    assert.equal(bl.status_url, batch.json.status_url)
    assert.equal(list.json.next_before, null)
  })

  it('pages are stable: every invoice once, in order, through ties and invoices made meanwhile', async () => {
    const acc = await account(sys)
    const base = Date.UTC(2026, 10, 20)
    // 45 invoices over 9 distinct times: ties everywhere, spread over every slot.
    await seed(sys, acc.id, 45, { at: (i) => new Date(base + Math.floor(i / 5) * 1000) })
    const got = await all(sys, acc.key, '', 7)
    assert.equal(got.length, 45)
    assert.equal(new Set(got.map((i) => i.invoice_id)).size, 45)
    for (let i = 1; i < got.length; i++) {
      const [p, c] = [got[i - 1], got[i]]
      assert.ok(p.created_at > c.created_at || (p.created_at === c.created_at && p.invoice_id > c.invoice_id), `order at ${i}`)
    }
    // Invoices made after the first page do not shift the later pages.
    const p1 = await get(`${sys.url.invoice}/invoices?limit=10`, { key: acc.key })
    await seed(sys, acc.id, 5, { at: () => new Date(base + 3_600_000) })
    const p2 = await get(`${sys.url.invoice}/invoices?limit=10&before=${p1.json.next_before}`, { key: acc.key })
    assert.deepEqual(p2.json.invoices.map((i: any) => i.invoice_id), got.slice(10, 20).map((i) => i.invoice_id))
    // A page exactly filled at the end has no next page (no empty last page).
    const whole = await get(`${sys.url.invoice}/invoices?limit=50`, { key: acc.key })
    assert.equal(whole.json.invoices.length, 50)
    assert.equal(whole.json.next_before, null)
  })

  it('filters by number, recipient, creation time, format, kind and status', async () => {
    const acc = await account(sys)
    const day = (d: number, h = 12) => new Date(Date.UTC(2026, 10, d, h))
    await seed(sys, acc.id, 6, {
      at: (i) => day(10 + i),
      extra: (i) => ({
        request: {
          items: [item],
          invoice_number: ['INV-2026-001', 'inv-2026-002', 'CN-7', 'INV-2025-9', 'X', 'Y'][i],
          to: [{ name: 'Globex Corp' }, { name: 'ACME' }, { email: 'ap@GLOBEX.test' }, { name: 'Initech' }, {}, { name: 'a.b*c' }][i],
          ...(i === 3 ? { format: 'ubl' } : i === 4 ? { format: 'pdf' } : {}),
        },
        ...(i === 5 ? { status: 'failed', error: { status: 400, message: 'logo_url could not be fetched (HTTP 404)' } } : {}),
      }),
    })
    const numbers = async (q: string) => {
      const r = await get(`${sys.url.invoice}/invoices?${q}`, { key: acc.key })
      assert.equal(r.status, 200, r.text)
      return r.json.invoices.map((i: any) => i.invoice_number)
    }
    assert.deepEqual(await numbers('number=inv-2026'), ['inv-2026-002', 'INV-2026-001'])
    assert.deepEqual(await numbers('recipient=globex'), ['CN-7', 'INV-2026-001'])
    // Regex characters are matched as written.
    assert.deepEqual(await numbers('recipient=b*c'), ['Y'])
    assert.deepEqual(await numbers('recipient=%2A'), ['Y'])
    assert.deepEqual(await numbers('created_from=2026-11-11&created_to=2026-11-12'), ['CN-7', 'inv-2026-002'])
    assert.deepEqual(await numbers('created_from=2026-11-11T12:00:01Z'), ['Y', 'X', 'INV-2025-9', 'CN-7'])
    assert.deepEqual(await numbers('format=ubl'), ['INV-2025-9'])
    assert.deepEqual(await numbers('format=pdf'), ['Y', 'X', 'CN-7', 'inv-2026-002', 'INV-2026-001'])
    assert.deepEqual(await numbers('kind=batch'), [])
    assert.deepEqual(await numbers('status=failed'), ['Y'])
    const failed = await get(`${sys.url.invoice}/invoices?status=failed`, { key: acc.key })
    assert.equal(failed.json.invoices[0].error, 'logo_url could not be fetched (HTTP 404)')
    assert.equal(failed.json.invoices[0].download_url, null)
    assert.deepEqual(await numbers('number=inv&recipient=acme'), ['inv-2026-002'])
  })

  it("never shows another account's invoices or batches", async () => {
    const owner = await account(sys, 'pro')
    const other = await account(sys, 'pro')
    await seed(sys, owner.id, 3, { at: (i) => new Date(Date.UTC(2026, 10, 1, i)) })
    const b = await submit(sys, owner.key, [{ items: [item] }])
    assert.equal(b.status, 202, b.text)
    const mine = await get(`${sys.url.invoice}/invoices`, { key: owner.key })
    assert.equal(mine.json.invoices.length, 4)
    const theirs = await get(`${sys.url.invoice}/invoices`, { key: other.key })
    assert.deepEqual(theirs.json, { invoices: [], next_before: null })
    // The owner's cursor leads the other account nowhere.
    const p = await get(`${sys.url.invoice}/invoices?limit=1`, { key: owner.key })
    const next = await get(`${sys.url.invoice}/invoices?before=${p.json.next_before}`, { key: other.key })
    assert.deepEqual(next.json.invoices, [])
    assert.deepEqual((await get(`${sys.url.invoice}/invoices/batch`, { key: other.key })).json, { batches: [], next_before: null })
    assert.equal((await get(`${sys.url.invoice}/invoices/batch`, { key: owner.key })).json.batches.length, 1)
    assert.equal((await get(`${sys.url.invoice}/invoices/${mine.json.invoices[1].invoice_id}`, { key: other.key })).status, 404)
  })

  it('pages batches newest first, with a processing batch counted from its rows', async () => {
    const acc = await account(sys, 'pro')
    const ids: string[] = []
    for (let i = 0; i < 3; i++) {
      const r = await submit(sys, acc.key, [{ items: [item] }, { items: [item] }])
      assert.equal(r.status, 202, r.text)
      ids.push(r.json.batch_id)
    }
    const p1 = await get(`${sys.url.invoice}/invoices/batch?limit=2`, { key: acc.key })
    assert.equal(p1.status, 200, p1.text)
    const p2 = await get(`${sys.url.invoice}/invoices/batch?limit=2&before=${p1.json.next_before}`, { key: acc.key })
    assert.equal(p2.json.next_before, null)
    const listed = [...p1.json.batches, ...p2.json.batches]
    assert.deepEqual(new Set(listed.map((b: any) => b.batch_id)), new Set(ids))
    for (const b of listed) {
      const c = b.counts
      assert.equal(c.queued + c.rendering + c.done + c.failed, 2)
      assert.equal(b.archive_url === null, b.status !== 'finished')
    }
    for (let i = 1; i < listed.length; i++) assert.ok(listed[i - 1].created_at >= listed[i].created_at)
    const finished = await get(`${sys.url.invoice}/invoices/batch?status=processing`, { key: acc.key })
    assert.ok(finished.json.batches.every((b: any) => b.status === 'processing'))
  })

  it('refuses bad input with a 400 naming the parameter, and no key with a 401', async () => {
    const { key } = await account(sys)
    const cases: Array<[string, RegExp]> = [
      ['limit=0', /^limit must be >= 1$/],
      ['limit=101', /^limit must be <= 100$/],
      ['limit=abc', /^limit must be/],
      ['before=nope', /^before must be a next_before value from a previous page$/],
      ['before=1_a_b', /^before must be a next_before value/],
      ['created_from=yesterday', /^created_from must be a date/],
      ['created_to=2026-11-28T10:00:00', /^created_to must be a date/],
      ['created_from=2026-11-20&created_to=2026-11-10', /^created_from must be before created_to$/],
      ['format=docx', /^format must be one of: pdf, facturx, xrechnung, ubl$/],
      ['kind=demo', /^kind must be one of: single, batch$/],
      ['status=lost', /^status must be one of/],
      [`number=${'x'.repeat(101)}`, /^number must be at most 100 characters$/],
      ['number=a&number=b', /^number must be a string$/],
    ]
    for (const [q, msg] of cases) {
      const r = await get(`${sys.url.invoice}/invoices?${q}`, { key })
      assert.equal(r.status, 400, `${q}: ${r.text}`)
      assert.match(r.json.error, msg, q)
    }
    for (const [q, msg] of [['limit=0', /^limit must be >= 1$/], ['before=x', /^before must be a next_before/], ['status=done', /^status must be one of: processing, finished$/]] as const) {
      const r = await get(`${sys.url.invoice}/invoices/batch?${q}`, { key })
      assert.equal(r.status, 400, `${q}: ${r.text}`)
      assert.match(r.json.error, msg)
    }
    for (const path of ['/invoices', '/invoices/batch']) {
      const r = await call('GET', `${sys.url.invoice}${path}`)
      assert.equal(r.status, 401)
      assert.equal(r.json.error, 'Unauthorized: invalid or missing API key')
    }
  })

  it('is described in /openapi.json with its query parameters', async () => {
    const doc = (await get(`${sys.root.invoice}/openapi.json`)).json
    const list = doc.paths['/api/v1/invoices'].get
    assert.deepEqual(
      list.parameters.map((p: any) => p.name).sort(),
      ['before', 'created_from', 'created_to', 'format', 'kind', 'limit', 'number', 'recipient', 'status'],
    )
    assert.ok(list.responses['200'].content['application/json'].schema.properties.next_before)
    assert.deepEqual(doc.paths['/api/v1/invoices/batch'].get.parameters.map((p: any) => p.name).sort(), ['before', 'limit', 'status'])
    assert.ok(doc.paths['/api/v1/invoices/batch'].post, 'POST /invoices/batch still documented')
  })
})
