// Every invoice endpoint as the spec describes it: success, each error status with the seeded
// messages, and a table of bad input that must answer a clear 4xx JSON error and change nothing.
import assert from 'node:assert/strict'
import { startSystem, type TestSystem } from './helpers/system.ts'
import { invoiceSlots } from '../src/invoice/store/invoice-store.ts'
import { assertJsonError, call, get, post, type Res } from './helpers/http.ts'
import { pdfText, qpdfCheck } from './helpers/pdf.ts'
import { sha256 } from '../src/platform/ids.ts'

/** Every error in this file must be exactly `{"error": …}` as JSON. */
const assertJsonErrorExact = (res: Res, status: number, message?: string | RegExp) => assertJsonError(res, status, message, { exact: true })

const ITEMS_REQUIRED = 'items is required and must be a non-empty array'
const UNAUTHORIZED = 'Unauthorized: invalid or missing API key'
const item = { description: 'Consulting', quantity: 2, unit_price: 50 }
const big = 'x'.repeat(1024 * 1024)

describe('invoice API: endpoints', () => {
  let sys: TestSystem
  let base: string
  let key: string

  before(async () => {
    sys = await startSystem({ services: ['invoice'] })
    base = sys.url.invoice!
    key = (await post(`${base}/signup`, { email: 'owner@example.com' })).json.api_key
  })
  after(async () => sys?.stop())

  const usageOf = async (k: string) => (await get(`${base}/usage`, { key: k })).json
  const invoiceCount = () => invoiceSlots(sys.platform.db).countDocuments({})

  describe('POST /signup', () => {
    it('creates a free account with a dm_ key that is stored only as a hash', async () => {
      const res = await post(`${base}/signup`, { email: 'New.User@Example.com' })
      assert.equal(res.status, 200)
      assert.deepEqual(Object.keys(res.json).sort(), ['api_key', 'monthly_limit', 'plan'])
      assert.match(res.json.api_key, /^dm_[0-9A-Za-z]{32,}$/)
      assert.equal(res.json.plan, 'free')
      assert.equal(res.json.monthly_limit, 5)
      const acc = await sys.platform.db.collection('accounts').findOne({ email: 'new.user@example.com' })
      assert.ok(acc, 'the e-mail is stored lower-cased')
      assert.equal(acc.key_hash, sha256(res.json.api_key))
      assert.ok(!JSON.stringify(acc).includes(res.json.api_key), 'the key itself is not stored')
    })

    it('answers 409 for an e-mail that already has an account (any letter case)', async () => {
      assert.equal((await post(`${base}/signup`, { email: 'dup@example.com' })).status, 200)
      const res = await post(`${base}/signup`, { email: '  DUP@example.com ' })
      assertJsonErrorExact(res, 409, 'An account with this email already exists')
      assert.equal(await sys.platform.db.collection('accounts').countDocuments({ email: 'dup@example.com' }), 1)
    })

    const bad: [string, unknown, string][] = [
      ['missing email', {}, 'email is required'],
      ['number email', { email: 42 }, 'email must be a string'],
      ['null email', { email: null }, 'email must be a string'],
      ['not an e-mail', { email: 'nope' }, 'email must be a valid e-mail address'],
      ['empty e-mail', { email: '' }, 'email must be a valid e-mail address'],
      ['1 MB e-mail', { email: big + '@example.com' }, 'email must be at most 254 characters'],
      ['array body', [{ email: 'a@example.com' }], 'body must be an object'],
    ]
    for (const [name, body, message] of bad) {
      it(`400 for ${name}, and no account is created`, async () => {
        const before = await sys.platform.db.collection('accounts').countDocuments({})
        assertJsonErrorExact(await post(`${base}/signup`, body), 400, message)
        assert.equal(await sys.platform.db.collection('accounts').countDocuments({}), before)
      })
    }

    it('400 for malformed JSON, 415 for a non-JSON body', async () => {
      assertJsonErrorExact(await call('POST', `${base}/signup`, { raw: '{"email": "a@b.c"' }), 400, 'Malformed JSON body')
      assertJsonErrorExact(
        await call('POST', `${base}/signup`, { raw: 'email=a@b.c', headers: { 'content-type': 'application/x-www-form-urlencoded' } }),
        415,
        'Content-Type must be application/json',
      )
    })

    // Decision (docs/invoice.md): addresses are ASCII; an internationalised domain is given in
    // its punycode form, a non-ASCII local part or domain is refused.
    it('refuses a non-ASCII e-mail address with 400 and creates nothing; a punycode domain is accepted', async () => {
      for (const email of ['zółw@example.com', 'user@bücher.de', '用户@例子.广告']) {
        const before = await sys.platform.db.collection('accounts').countDocuments({})
        assertJsonErrorExact(await post(`${base}/signup`, { email }), 400, 'email must be a valid e-mail address')
        assert.equal(await sys.platform.db.collection('accounts').countDocuments({}), before, email)
      }
      const res = await post(`${base}/signup`, { email: 'zolw@xn--bcher-kva.de' })
      assert.equal(res.status, 200, res.text)
      assert.equal(res.json.plan, 'free')
    })
  })

  describe('authentication', () => {
    const cases: [string, Record<string, string>][] = [
      ['no Authorization header', {}],
      ['an unknown dm_ key', { authorization: 'Bearer dm_' + 'A'.repeat(40) }],
      ['a key without the Bearer scheme', { authorization: 'dm_' + 'A'.repeat(40) }],
      ['an empty Bearer', { authorization: 'Bearer ' }],
      ['a key of another service', { authorization: 'Bearer fb_' + 'A'.repeat(40) }],
      ['an 8 KB key', { authorization: 'Bearer dm_' + 'A'.repeat(8_000) }],
    ]
    for (const [name, headers] of cases) {
      it(`401 on /invoice and /usage with ${name}`, async () => {
        const inv = await call('POST', `${base}/invoice`, { json: { items: [item] }, headers })
        assertJsonErrorExact(inv, 401, UNAUTHORIZED)
        assertJsonErrorExact(await call('GET', `${base}/usage`, { headers }), 401, UNAUTHORIZED)
      })
    }
  })

  describe('GET /usage', () => {
    it('shows plan, count, limit and remaining for a new account', async () => {
      const k = (await post(`${base}/signup`, { email: 'usage@example.com' })).json.api_key
      const res = await get(`${base}/usage`, { key: k })
      assert.equal(res.status, 200)
      assert.deepEqual(res.json, { plan: 'free', invoices_this_month: 0, monthly_limit: 5, remaining: 5 })
    })

    it('another account’s invoices do not show in my usage', async () => {
      const a = (await post(`${base}/signup`, { email: 'tenant-a@example.com' })).json.api_key
      const b = (await post(`${base}/signup`, { email: 'tenant-b@example.com' })).json.api_key
      assert.equal((await post(`${base}/invoice`, { items: [item] }, { key: a })).status, 200)
      assert.equal((await usageOf(a)).invoices_this_month, 1)
      assert.equal((await usageOf(b)).invoices_this_month, 0)
    })
  })

  describe('POST /invoice', () => {
    it('answers the PDF with the spec’s headers and counts it', async () => {
      const k = (await post(`${base}/signup`, { email: 'pdf@example.com' })).json.api_key
      const res = await post(`${base}/invoice`, { items: [item], invoice_number: 'INV-777' }, { key: k })
      assert.equal(res.status, 200, res.text)
      assert.equal(res.headers.get('content-type'), 'application/pdf')
      assert.equal(res.headers.get('content-disposition'), 'attachment; filename="invoice.pdf"')
      assert.equal(res.body.subarray(0, 5).toString(), '%PDF-')
      qpdfCheck(res.body)
      assert.match(pdfText(res.body), /INV-777/)
      assert.deepEqual(await usageOf(k), { plan: 'free', invoices_this_month: 1, monthly_limit: 5, remaining: 4 })
    })

    it('429 with the seeded message and Retry-After once the monthly limit is used', async () => {
      const k = (await post(`${base}/signup`, { email: 'limit@example.com' })).json.api_key
      for (let i = 0; i < 5; i++) assert.equal((await post(`${base}/invoice`, { items: [item] }, { key: k })).status, 200)
      const res = await post(`${base}/invoice`, { items: [item] }, { key: k })
      assertJsonErrorExact(res, 429, 'Monthly limit reached. Upgrade your plan to continue.')
      assert.ok(Number(res.headers.get('retry-after')) >= 1, 'Retry-After until the next month')
      assert.deepEqual(await usageOf(k), { plan: 'free', invoices_this_month: 5, monthly_limit: 5, remaining: 0 })
    })

    it('a higher plan has a higher limit', async () => {
      const k = (await post(`${base}/signup`, { email: 'starter@example.com' })).json.api_key
      await sys.platform.db.collection('accounts').updateOne({ email: 'starter@example.com' }, { $set: { plan: 'starter' } })
      assert.deepEqual(await usageOf(k), { plan: 'starter', invoices_this_month: 0, monthly_limit: 100, remaining: 100 })
    })

    it('accepts Unicode everywhere and prints it', async () => {
      const res = await post(
        `${base}/invoice`,
        { items: [{ description: 'Prüfung – ünïcödé ő', quantity: 1, unit_price: 1 }], to: { name: 'Łódź Sp. z o.o.' }, currency_symbol: 'zł' },
        { key },
      )
      assert.equal(res.status, 200, res.text)
      const text = pdfText(res.body)
      assert.ok(text.includes('Prüfung – ünïcödé ő'), text)
      assert.ok(text.includes('Łódź Sp. z o.o.'), text)
      assert.ok(text.includes('zł1.00'), text)
    })

    // Every row: the body, then the exact message. None of them may be counted or stored.
    const manyItems = (n: number) => Array.from({ length: n }, (_, i) => ({ description: `Item ${i}`, quantity: 1, unit_price: 1 }))
    const badBodies: [string, unknown, string][] = [
      ['no items', {}, ITEMS_REQUIRED],
      ['items: []', { items: [] }, ITEMS_REQUIRED],
      ['items: null', { items: null }, ITEMS_REQUIRED],
      ['items: a string', { items: 'Consulting' }, ITEMS_REQUIRED],
      ['items: an object', { items: { 0: item } }, ITEMS_REQUIRED],
      ['items: a number', { items: 3 }, ITEMS_REQUIRED],
      ['a JSON array body', [item], ITEMS_REQUIRED],
      ['an item that is not an object', { items: ['x'] }, 'items[0] must be an object'],
      ['a missing description', { items: [{ quantity: 1, unit_price: 1 }] }, 'items[0].description is required'],
      ['an empty description', { items: [{ ...item, description: '' }] }, 'items[0].description must not be empty'],
      ['a blank description', { items: [{ ...item, description: '   ' }] }, 'items[0].description must not be empty'],
      ['a 1 MB description', { items: [{ ...item, description: big }] }, 'items[0].description must be at most 1000 characters'],
      ['a numeric description', { items: [{ ...item, description: 5 }] }, 'items[0].description must be a string'],
      ['a missing quantity', { items: [{ description: 'x', unit_price: 1 }] }, 'items[0].quantity is required'],
      ['a string quantity', { items: [{ ...item, quantity: '2' }] }, 'items[0].quantity must be a number'],
      ['a "NaN" quantity', { items: [{ ...item, quantity: 'NaN' }] }, 'items[0].quantity must be a number'],
      ['a null quantity', { items: [{ ...item, quantity: null }] }, 'items[0].quantity must be a number'],
      ['a zero quantity', { items: [{ ...item, quantity: 0 }] }, 'items[0].quantity must be > 0'],
      ['a negative quantity', { items: [item, { ...item, quantity: -1 }] }, 'items[1].quantity must be > 0'],
      ['a huge quantity', { items: [{ ...item, quantity: 1e15 }] }, 'items[0].quantity must be <= 1000000000'],
      ['a negative unit_price', { items: [{ ...item, unit_price: -0.01 }] }, 'items[0].unit_price must be >= 0'],
      ['a huge unit_price', { items: [{ ...item, unit_price: 1e300 }] }, 'items[0].unit_price must be <= 1000000000000'],
      ['a boolean unit_price', { items: [{ ...item, unit_price: true }] }, 'items[0].unit_price must be a number'],
      ['1,001 items', { items: manyItems(1001) }, 'items must have at most 1000 line items'],
      ['a tax_rate over 100', { items: [item], tax_rate: 101 }, 'tax_rate must be <= 100'],
      ['a negative tax_rate', { items: [item], tax_rate: -5 }, 'tax_rate must be >= 0'],
      ['a string tax_rate', { items: [item], tax_rate: '10%' }, 'tax_rate must be a number'],
      ['a negative discount', { items: [item], discount: -1 }, 'discount must be >= 0'],
      ['a discount over the subtotal', { items: [item], discount: 100.01 }, 'discount must not exceed the subtotal'],
      ['from as a string', { items: [item], from: 'ACME' }, 'from must be an object'],
      ['a numeric to.name', { items: [item], to: { name: 7 } }, 'to.name must be a string'],
      ['1 MB notes', { items: [item], notes: big }, 'notes must be at most 10000 characters'],
      ['1 MB payment_info', { items: [item], payment_info: big }, 'payment_info must be at most 5000 characters'],
      ['a numeric invoice_number', { items: [item], invoice_number: 12 }, 'invoice_number must be a string'],
      ['a long currency symbol', { items: [item], currency_symbol: 'DOLLARS!!!' }, 'currency_symbol must be at most 8 characters'],
      ['a numeric logo_url', { items: [item], logo_url: 5 }, 'logo_url must be a string'],
    ]
    for (const [name, body, message] of badBodies) {
      it(`400 for ${name}; nothing counted or stored`, async () => {
        const [before, used] = [await invoiceCount(), (await usageOf(key)).invoices_this_month]
        assertJsonErrorExact(await post(`${base}/invoice`, body, { key }), 400, message)
        assert.equal(await invoiceCount(), before)
        assert.equal((await usageOf(key)).invoices_this_month, used)
      })
    }

    it('Infinity-like numbers (1e999 parses to Infinity) are refused with a 400', async () => {
      const res = await call('POST', `${base}/invoice`, { raw: '{"items":[{"description":"x","quantity":1e999,"unit_price":1}]}', key })
      assertJsonErrorExact(res, 400, 'items[0].quantity must be a finite number')
    })

    const rawCases: [string, string | undefined, Record<string, string>, number, string][] = [
      ['malformed JSON', '{"items": [', {}, 400, 'Malformed JSON body'],
      // The body parser is strict: only an object or array is JSON a client meant as a body.
      ['a JSON string body', '"items"', {}, 400, 'Malformed JSON body'],
      ['a JSON null body', 'null', {}, 400, 'Malformed JSON body'],
      ['an empty body', '', {}, 400, ITEMS_REQUIRED],
      ['a text/plain body', 'items', { 'content-type': 'text/plain' }, 415, 'Content-Type must be application/json'],
      ['invalid UTF-8 JSON', '{"items": "\udc00"}', {}, 400, ITEMS_REQUIRED],
    ]
    for (const [name, raw, headers, status, message] of rawCases) {
      it(`${status} for ${name}; nothing counted`, async () => {
        const [before, used] = [await invoiceCount(), (await usageOf(key)).invoices_this_month]
        assertJsonErrorExact(await call('POST', `${base}/invoice`, { raw, key, headers }), status, message)
        assert.equal(await invoiceCount(), before)
        assert.equal((await usageOf(key)).invoices_this_month, used)
      })
    }

    it('413 for a body over the size cap; nothing counted', async () => {
      const [before, used] = [await invoiceCount(), (await usageOf(key)).invoices_this_month]
      const res = await post(`${base}/invoice`, { items: [item], notes: 'x'.repeat(11 * 1024 * 1024) }, { key })
      assertJsonErrorExact(res, 413, 'Request body too large')
      assert.equal(await invoiceCount(), before)
      assert.equal((await usageOf(key)).invoices_this_month, used)
    })

    it('unknown routes and methods answer JSON 404/405', async () => {
      assertJsonErrorExact(await get(`${base}/nope`), 404, 'Not found')
      assertJsonErrorExact(await get(`${base}/invoice`, { key }), 405, 'Method not allowed')
    })
  })

  describe('POST /demo-invoice', () => {
    it('renders without authentication, named demo.pdf, and counts nothing', async () => {
      const before = await usageOf(key)
      const res = await post(`${base}/demo-invoice`, { items: [item], from: { name: 'Demo Sender' } })
      assert.equal(res.status, 200, res.text)
      assert.equal(res.headers.get('content-type'), 'application/pdf')
      assert.equal(res.headers.get('content-disposition'), 'attachment; filename="demo.pdf"')
      qpdfCheck(res.body)
      assert.match(pdfText(res.body), /Demo Sender/)
      assert.deepEqual(await usageOf(key), before)
    })

    it('400 for more than 20 items, and for missing items', async () => {
      const items = Array.from({ length: 21 }, (_, i) => ({ description: `Row ${i}`, quantity: 1, unit_price: 1 }))
      assertJsonErrorExact(await post(`${base}/demo-invoice`, { items }), 400, 'items must have at most 20 line items')
      assertJsonErrorExact(await post(`${base}/demo-invoice`, { items: [] }), 400, ITEMS_REQUIRED)
      assertJsonErrorExact(await call('POST', `${base}/demo-invoice`, { raw: '{' }), 400, 'Malformed JSON body')
    })
  })

  describe('POST /subscribe', () => {
    it('stores an e-mail once however often it is subscribed', async () => {
      const a = await post(`${base}/subscribe`, { email: 'reader@example.com' })
      const b = await post(`${base}/subscribe`, { email: 'Reader@Example.com' })
      assert.equal(a.status, 200)
      assert.equal(b.status, 200)
      assert.equal(typeof a.json.message, 'string')
      assert.ok(a.json.message.length > 0)
      assert.deepEqual(b.json, a.json)
      assert.equal(await sys.platform.db.collection('newsletter_subscribers').countDocuments({ _id: 'reader@example.com' as any }), 1)
    })

    it('many concurrent subscriptions of one address store one document', async () => {
      const all = await Promise.all(Array.from({ length: 10 }, () => post(`${base}/subscribe`, { email: 'burst@example.com' })))
      assert.deepEqual(all.map((r) => r.status), Array(10).fill(200))
      assert.equal(await sys.platform.db.collection('newsletter_subscribers').countDocuments({ _id: 'burst@example.com' as any }), 1)
    })

    const bad: [string, unknown, string][] = [
      ['missing email', {}, 'email is required'],
      ['invalid email', { email: 'not-an-email' }, 'email must be a valid e-mail address'],
      ['numeric email', { email: 1 }, 'email must be a string'],
      ['1 MB email', { email: big }, 'email must be at most 254 characters'],
    ]
    for (const [name, body, message] of bad) {
      it(`400 for ${name}; nothing stored`, async () => {
        const before = await sys.platform.db.collection('newsletter_subscribers').countDocuments({})
        assertJsonErrorExact(await post(`${base}/subscribe`, body), 400, message)
        assert.equal(await sys.platform.db.collection('newsletter_subscribers').countDocuments({}), before)
      })
    }

    it('400 for malformed JSON and an empty body', async () => {
      assertJsonErrorExact(await call('POST', `${base}/subscribe`, { raw: 'not json' }), 400, 'Malformed JSON body')
      assertJsonErrorExact(await call('POST', `${base}/subscribe`, { raw: '' }), 400, 'email is required')
    })
  })
})
