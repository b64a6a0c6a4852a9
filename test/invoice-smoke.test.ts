import assert from 'node:assert/strict'
import { startSystem, type TestSystem } from './helpers/system.ts'
import { get, post } from './helpers/http.ts'
import { pdfText, qpdfCheck } from './helpers/pdf.ts'

describe('invoice service: smoke', () => {
  let sys: TestSystem
  before(async () => {
    sys = await startSystem({ services: ['invoice'] })
  })
  after(async () => sys?.stop())

  it('signs up, renders an invoice, and counts it', async () => {
    const signup = await post(`${sys.url.invoice}/signup`, { email: 'smoke@example.com' })
    assert.equal(signup.status, 200)
    assert.match(signup.json.api_key, /^dm_[0-9A-Za-z]{32,}$/)
    const key = signup.json.api_key
    const res = await post(`${sys.url.invoice}/invoice`, { items: [{ description: 'Widget', quantity: 3, unit_price: 2.5 }] }, { key })
    assert.equal(res.status, 200, res.text)
    assert.equal(res.headers.get('content-type'), 'application/pdf')
    qpdfCheck(res.body)
    assert.match(pdfText(res.body), /Widget[\s\S]*\$7\.50/)
    const usage = await get(`${sys.url.invoice}/usage`, { key })
    assert.deepEqual(usage.json, { plan: 'free', invoices_this_month: 1, monthly_limit: 5, remaining: 4 })
  })
})
