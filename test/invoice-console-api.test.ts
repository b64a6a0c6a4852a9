// What the invoice console needs beyond the public API: key rotation (new key once, the old one
// refused at once) and the live preview (rendered, never counted or listed, limited per account).
import assert from 'node:assert/strict'
import { startSystem, type TestSystem } from './helpers/system.ts'
import { call, get, post } from './helpers/http.ts'
import { account } from './helpers/invoice-batch.ts'
import { pdfText } from './helpers/pdf.ts'
import { PREVIEW_PER_MINUTE } from '../src/invoice/invoice-routes.ts'

const body = { items: [{ description: 'Widget', quantity: 3, unit_price: 2.5 }], invoice_number: 'PV-1' }

describe('invoice service: key rotation and the live preview', function () {
  this.timeout(120_000)
  let sys: TestSystem
  before(async () => {
    sys = await startSystem({ services: ['invoice'] })
  })
  after(async () => sys?.stop())

  it('rotates the key: the new one is shown once and works, the old one is refused', async () => {
    const { key } = await account(sys)
    const r = await post(`${sys.url.invoice}/account/key/rotate`, undefined, { key })
    assert.equal(r.status, 200, r.text)
    assert.equal(r.headers.get('cache-control'), 'no-store')
    assert.match(r.json.api_key, /^dm_[0-9A-Za-z]{40}$/)
    assert.notEqual(r.json.api_key, key)
    assert.match(r.json.message, /shown only once/)
    assert.equal((await get(`${sys.url.invoice}/usage`, { key })).status, 401)
    const usage = await get(`${sys.url.invoice}/usage`, { key: r.json.api_key })
    assert.equal(usage.status, 200, usage.text)
    assert.equal(usage.json.plan, 'free')
    // The old key cannot rotate again.
    assert.equal((await post(`${sys.url.invoice}/account/key/rotate`, undefined, { key })).status, 401)
  })

  it('of two rotations with the same key, one wins; the key it returned is the one that works', async () => {
    const { key } = await account(sys)
    const both = await Promise.all([0, 1].map(() => post(`${sys.url.invoice}/account/key/rotate`, undefined, { key })))
    const won = both.filter((r) => r.status === 200)
    assert.equal(won.length, 1, both.map((r) => `${r.status} ${r.text}`).join(' | '))
    const lost = both.find((r) => r.status !== 200)!
    assert.ok(lost.status === 409 || lost.status === 401, lost.text)
    if (lost.status === 409) assert.equal(lost.json.error, 'The API key was already replaced by another request; use the key that request returned.')
    assert.equal((await get(`${sys.url.invoice}/usage`, { key: won[0]!.json.api_key })).status, 200)
  })

  it("another service's key or none cannot rotate", async () => {
    assert.equal((await call('POST', `${sys.url.invoice}/account/key/rotate`)).status, 401)
    assert.equal((await post(`${sys.url.invoice}/account/key/rotate`, undefined, { key: 'wv_' + 'a'.repeat(40) })).status, 401)
  })

  it('previews without counting or listing, also once the month is used up', async () => {
    const { key } = await account(sys)
    for (let i = 0; i < 5; i++) assert.equal((await post(`${sys.url.invoice}/invoice`, body, { key })).status, 200)
    assert.equal((await post(`${sys.url.invoice}/invoice`, body, { key })).status, 429)
    const p = await post(`${sys.url.invoice}/invoice/preview`, body, { key })
    assert.equal(p.status, 200, p.text)
    assert.equal(p.headers.get('content-type'), 'application/pdf')
    assert.equal(p.headers.get('content-disposition'), 'inline; filename="preview.pdf"')
    assert.match(pdfText(p.body), /Widget[\s\S]*\$7\.50/)
    const usage = await get(`${sys.url.invoice}/usage`, { key })
    assert.equal(usage.json.invoices_this_month, 5)
    const list = await get(`${sys.url.invoice}/invoices`, { key })
    assert.equal(list.json.invoices.length, 5)
    // The same body as POST /invoice renders the same document (the preview is what will be downloaded).
    const { key: fresh } = await account(sys)
    const real = await post(`${sys.url.invoice}/invoice`, body, { key: fresh })
    assert.equal(pdfText(real.body), pdfText(p.body))
  })

  it("answers POST /invoice's 400 at the field, and counts nothing", async () => {
    const { key } = await account(sys)
    const r = await post(`${sys.url.invoice}/invoice/preview`, { items: [{ description: 'x', quantity: 0, unit_price: 1 }] }, { key })
    assert.equal(r.status, 400)
    assert.equal(r.json.error, 'items[0].quantity must be > 0')
    const e = await post(`${sys.url.invoice}/invoice/preview`, { ...body, format: 'xrechnung' }, { key })
    assert.equal(e.status, 400)
    assert.match(e.json.error, /BT-/)
    assert.equal((await get(`${sys.url.invoice}/usage`, { key })).json.invoices_this_month, 0)
    assert.equal((await call('POST', `${sys.url.invoice}/invoice/preview`, { json: body })).status, 401)
  })

  it(`limits previews to ${PREVIEW_PER_MINUTE} a minute per account, not per client`, async () => {
    const a = await account(sys)
    const b = await account(sys)
    // Refused bodies are counted too (the limit is taken first), and cost no render.
    for (let i = 0; i < PREVIEW_PER_MINUTE; i++) assert.equal((await post(`${sys.url.invoice}/invoice/preview`, {}, { key: a.key })).status, 400)
    const r = await post(`${sys.url.invoice}/invoice/preview`, body, { key: a.key })
    assert.equal(r.status, 429)
    assert.equal(r.json.error, `Preview rate limit exceeded. Maximum ${PREVIEW_PER_MINUTE} previews per minute.`)
    assert.ok(Number(r.headers.get('retry-after')) >= 1)
    assert.equal((await post(`${sys.url.invoice}/invoice/preview`, body, { key: b.key })).status, 200)
  })

  it('documents the preview and the rotation in /openapi.json', async () => {
    const doc = (await get(`${sys.root.invoice}/openapi.json`)).json
    assert.ok(doc.paths['/api/v1/invoice/preview'].post.requestBody, 'preview takes the invoice body')
    assert.match(doc.paths['/api/v1/invoice/preview'].post.summary, /without counting or listing/)
    assert.ok(doc.paths['/api/v1/account/key/rotate'].post.responses['200'].content)
  })
})
