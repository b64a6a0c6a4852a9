// The invoice console's running totals (src/console/invoice/totals.ts, a copy made for the browser
// bundle) equal the service's (src/invoice/model/vat.ts and money.ts) on generated invoices: lines
// with fractions and sub-cent prices, line rates and categories, the flat discount, document
// allowances and charges, currencies with 0, 2 and 3 decimals. A change to the service's rules
// that is not made in the copy fails here.
import assert from 'node:assert/strict'
import fc from 'fast-check'
import { computeVat as serverVat, TAX_CATEGORIES as SERVER_CATEGORIES } from '../src/invoice/model/vat.ts'
import { currencyExponent as serverExponent, decimalString as serverDecimalString } from '../src/invoice/model/money.ts'
import { computeVat, currencyExponent, decimalString, TAX_CATEGORIES } from '../src/console/invoice/totals.ts'

// Decimals as a person types them: up to 4 places, some large, some tiny.
const amount = fc.oneof(
  fc.integer({ min: 0, max: 10_000 }),
  fc.integer({ min: 1, max: 10_000_000 }).map((n) => n / 100),
  fc.integer({ min: 1, max: 10_000_000 }).map((n) => n / 10_000),
  fc.constantFrom(0.005, 1.005, 2.675, 0.015, 1e-7, 123456789.99),
)
const positive = amount.filter((n) => n > 0)
const rate = fc.oneof(fc.constantFrom(0, 5.5, 7, 19, 20, 21, 2.1, 100), fc.integer({ min: 0, max: 10_000 }).map((n) => n / 100))
const category = fc.constantFrom(...TAX_CATEGORIES)
const adjustment = fc.record({ amount: positive, tax_rate: fc.option(rate, { nil: undefined }), tax_category: fc.option(category, { nil: undefined }) }, { requiredKeys: ['amount'] })
const line = fc.record(
  {
    quantity: positive,
    unit_price: amount,
    tax_rate: fc.option(rate, { nil: undefined }),
    tax_category: fc.option(category, { nil: undefined }),
    allowances: fc.array(fc.record({ amount: positive }), { maxLength: 2 }),
    charges: fc.array(fc.record({ amount: positive }), { maxLength: 2 }),
  },
  { requiredKeys: ['quantity', 'unit_price'] },
)
const invoice = fc.record(
  {
    items: fc.array(line, { minLength: 1, maxLength: 25 }),
    tax_rate: fc.option(rate, { nil: undefined }),
    tax_category: fc.option(category, { nil: undefined }),
    discount: fc.option(amount, { nil: undefined }),
    allowances: fc.array(adjustment, { maxLength: 3 }),
    charges: fc.array(adjustment, { maxLength: 3 }),
  },
  { requiredKeys: ['items'] },
)

describe('invoice console: running totals equal the service’s', () => {
  it('has the same VAT categories', () => {
    assert.deepEqual([...TAX_CATEGORIES], [...SERVER_CATEGORIES])
  })

  it('computes every line, group, tax and total as the service does (generated invoices, 0/2/3 decimals)', () => {
    const seed = Number(process.env.FC_SEED ?? 4848)
    fc.assert(
      fc.property(invoice, fc.constantFrom('EUR', 'JPY', 'BHD', 'USD'), (inv, currency) => {
        const exp = currencyExponent(currency)
        assert.equal(exp, serverExponent(currency))
        const mine = computeVat(inv as any, exp)
        const theirs = serverVat(inv as any, exp)
        assert.deepEqual(mine, theirs)
        assert.equal(decimalString(mine.total, exp), serverDecimalString(theirs.total, exp))
      }),
      { seed, numRuns: 2_000 },
    )
  })

  it('fails when the rules differ (the comparison can see a difference)', () => {
    const inv = { items: [{ quantity: 3, unit_price: 0.335 }], discount: 0.01, tax_rate: 19 }
    const mine = computeVat(inv)
    assert.equal(mine.total, serverVat(inv).total)
    assert.equal(decimalString(mine.total, 2), '1.19') // 1.01 − 0.01 = 1.00, + 19 % = 1.19
    assert.notDeepEqual(computeVat({ ...inv, tax_rate: 19.5 }), serverVat(inv))
  })
})
