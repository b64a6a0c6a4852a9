// The single-invoice render job's contract: the request it carries is checked for its shape like
// every other job payload (producer and worker alike), and a request the ingress accepted passes
// through that check unchanged.
import assert from 'node:assert/strict'
import { invoiceRenderContract } from '../src/invoice/job-contracts.ts'
import { invoiceBodySchema } from '../src/invoice/invoice-schema.ts'
import { fullRequest } from './helpers/einvoice.ts'

describe('invoice: the render job contract', () => {
  const record = { account_id: 'acc1', kind: 'single', period: '2026-11', created_at: '2026-11-27T10:00:00.000Z' }
  const issue = (payload: unknown) => {
    const r = invoiceRenderContract.schema.safeParse(payload)
    return r.success ? null : `${r.error.issues[0].path.join('.')}: ${r.error.issues[0].message}`
  }

  it('takes a request the ingress accepted, unchanged (an e-invoice request with every field too)', () => {
    for (const body of [{ items: [{ description: ' Work ', quantity: 2, unit_price: 50 }] }, fullRequest({ siren: '732 829 320' })]) {
      const request = invoiceBodySchema.parse(body)
      const parsed = invoiceRenderContract.schema.parse({ invoice_id: 'inv1', request, record })
      assert.deepEqual(parsed.request, request)
    }
    assert.equal(issue({ invoice_id: 'inv1' }), null, 'a job without a request reads it back from MongoDB')
  })

  it('refuses a request of the wrong shape, naming the field', () => {
    assert.equal(issue({ invoice_id: 'inv1', request: 'an invoice' }), 'request: Invalid input: expected object, received string')
    assert.equal(issue({ invoice_id: 'inv1', request: { items: [] } }), 'request.items: items is required and must be a non-empty array')
    assert.equal(issue({ invoice_id: 'inv1', request: { items: [{ description: 'x', quantity: 'two', unit_price: 1 }] } }), 'request.items.0.quantity: Invalid input: expected number, received string')
    assert.equal(issue({ invoice_id: 'inv1', request: { items: [{ description: 'x', quantity: 1, unit_price: 1 }], notes: 'n'.repeat(10_001) } }), 'request.notes: Too big: expected string to have <=10000 characters')
  })
})
