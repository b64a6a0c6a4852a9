// Invoice arithmetic (src/invoice/model/money.ts): exact decimals, half-up rounding, tax on the discounted
// subtotal, and formatting. A property test compares lines with an independent digit-based rounding.
import assert from 'node:assert/strict'
import fc from 'fast-check'
import { computeTotals, formatCents, formatMoney, formatQuantity, formatUnitPrice, toCents } from '../src/invoice/model/money.ts'

/** Reference: round-half-up of (mq/10^sq × mp/10^sp) in cents, by looking at the first dropped digit. */
function referenceCents(mq: bigint, sq: number, mp: bigint, sp: number): bigint {
  const product = mq * mp
  const scale = sq + sp
  if (scale <= 2) return product * 10n ** BigInt(2 - scale)
  const kept = product / 10n ** BigInt(scale - 2)
  const firstDropped = (product / 10n ** BigInt(scale - 3)) % 10n
  return firstDropped >= 5n ? kept + 1n : kept
}

describe('invoice money: exact decimal arithmetic', () => {
  it('reads numbers as the decimals the client wrote and rounds half up', () => {
    assert.equal(toCents(1.005), 101n) // a float would say 1.00499999…
    assert.equal(toCents(0.015), 2n)
    assert.equal(toCents(0.014999), 1n)
    assert.equal(toCents(2.675), 268n)
    assert.equal(toCents(0), 0n)
    assert.equal(toCents(1e-7), 0n) // String(1e-7) is "1e-7"
    assert.equal(toCents(1e21), 100000000000000000000000n) // String(1e21) is "1e+21"
  })

  it('line = round(quantity × unit_price), fractional quantities included', () => {
    const t = computeTotals(
      [
        { quantity: 3, unit_price: 0.335 }, // 1.005 → 1.01
        { quantity: 1.5, unit_price: 33.33 }, // 49.995 → 50.00
        { quantity: 0.1, unit_price: 0.2 }, // 0.02 exactly, though 0.1 × 0.2 = 0.020000000000000004
        { quantity: 0.333, unit_price: 0.01 }, // 0.00333 → 0.00
      ],
      {},
    )
    assert.deepEqual(t.lines, [101n, 5000n, 2n, 0n])
    assert.equal(t.subtotal, 5103n)
    assert.equal(t.total, 5103n)
  })

  it('tax applies to the subtotal after the discount', () => {
    const t = computeTotals([{ quantity: 1, unit_price: 52.5 }], { discount: 2.5, tax_rate: 20 })
    assert.deepEqual(t, { lines: [5250n], subtotal: 5250n, discount: 250n, taxable: 5000n, tax: 1000n, total: 6000n })
  })

  it('tax is rounded half up, with fractional rates', () => {
    assert.equal(computeTotals([{ quantity: 1, unit_price: 2.02 }], { tax_rate: 12.5 }).tax, 25n) // 0.2525
    assert.equal(computeTotals([{ quantity: 1, unit_price: 0.1 }], { tax_rate: 5 }).tax, 1n) // 0.005 → 0.01
    assert.equal(computeTotals([{ quantity: 1, unit_price: 0.1 }], { tax_rate: 4.99 }).tax, 0n) // 0.00499
    assert.equal(computeTotals([{ quantity: 1, unit_price: 100 }], { tax_rate: 100 }).total, 20000n)
  })

  it('a discount equal to the subtotal gives a total of zero, with no tax', () => {
    const t = computeTotals([{ quantity: 2, unit_price: 50 }], { discount: 100, tax_rate: 10 })
    assert.equal(t.taxable, 0n)
    assert.equal(t.tax, 0n)
    assert.equal(t.total, 0n)
  })

  it('a discount over the subtotal shows as a negative taxable amount (the schema refuses it)', () => {
    assert.equal(computeTotals([{ quantity: 1, unit_price: 1 }], { discount: 1.01 }).taxable, -1n)
  })

  it('stays exact for the largest amounts the schema accepts', () => {
    const t = computeTotals([{ quantity: 1e9, unit_price: 1e12 }], { tax_rate: 99.99 })
    assert.equal(t.subtotal, 10n ** 23n)
    assert.equal(t.tax, 9999n * 10n ** 19n)
  })

  it('formats money with thousands separators, the symbol, and a leading minus', () => {
    assert.equal(formatCents(123456789n), '1,234,567.89')
    assert.equal(formatCents(5n), '0.05')
    assert.equal(formatMoney(123450n, '€'), '€1,234.50')
    assert.equal(formatMoney(-250n, '$'), '-$2.50')
    assert.equal(formatMoney(0n, 'zł'), 'zł0.00')
    // formatCents itself signs negative amounts (found by mutation testing: only formatMoney's
    // own sign handling was checked).
    assert.equal(formatCents(-123456n), '-1,234.56')
    assert.equal(formatCents(-5n), '-0.05')
  })

  it('prints quantities and sub-cent unit prices as written', () => {
    assert.equal(formatQuantity(2), '2')
    assert.equal(formatQuantity(1.5), '1.5')
    assert.equal(formatQuantity(0.001), '0.001')
    assert.equal(formatQuantity(1e-7), '0.0000001')
    assert.equal(formatUnitPrice(0.0125, '$'), '$0.0125')
    assert.equal(formatUnitPrice(1234.5, '$'), '$1,234.50')
    assert.equal(formatUnitPrice(12345.678, '₹'), '₹12,345.678')
    // Every group of three, not only the last (found by mutation testing).
    assert.equal(formatUnitPrice(1234567.125, '$'), '$1,234,567.125')
  })

  describe('properties (fast-check)', () => {
    // Decimals as a client writes them: a mantissa and a number of decimal places.
    const decimalArb = (maxMantissa: number, maxScale: number) =>
      fc.record({ m: fc.integer({ min: 0, max: maxMantissa }), s: fc.integer({ min: 0, max: maxScale }) }).map(({ m, s }) => ({
        m,
        s,
        n: Number(`${m}e-${s}`),
      }))

    it('every line equals the digit-based half-up reference', () => {
      fc.assert(
        fc.property(decimalArb(10_000_000, 4), decimalArb(1_000_000_000, 5), (q, p) => {
          fc.pre(q.n > 0)
          const [line] = computeTotals([{ quantity: q.n, unit_price: p.n }], {}).lines
          assert.equal(line, referenceCents(BigInt(q.m), q.s, BigInt(p.m), p.s))
        }),
        { numRuns: 2_000 },
      )
    })

    it('total = subtotal − discount + tax, and tax never exceeds taxable × rate rounded up', () => {
      fc.assert(
        fc.property(
          fc.array(fc.record({ q: decimalArb(100_000, 3), p: decimalArb(10_000_000, 2) }), { minLength: 1, maxLength: 20 }),
          fc.integer({ min: 0, max: 10_000 }),
          fc.double({ min: 0, max: 1, noNaN: true }),
          (rows, rateBp, discountShare) => {
            const items = rows.filter((r) => r.q.n > 0).map((r) => ({ quantity: r.q.n, unit_price: r.p.n }))
            fc.pre(items.length > 0)
            const subtotal = computeTotals(items, {}).subtotal
            const discount = Number(formatCents((subtotal * BigInt(Math.floor(discountShare * 1000))) / 1000n).replace(/,/g, ''))
            const tax_rate = rateBp / 100
            const t = computeTotals(items, { discount, tax_rate })
            assert.equal(t.subtotal, t.lines.reduce((a, b) => a + b, 0n))
            assert.ok(t.taxable >= 0n)
            assert.equal(t.total, t.subtotal - t.discount + t.tax)
            // tax × 10000 is within half a cent of taxable × rate (in basis points).
            const exact = t.taxable * BigInt(rateBp)
            assert.ok(t.tax * 10_000n * 2n >= exact * 2n - 10_000n && t.tax * 10_000n * 2n <= exact * 2n + 10_000n)
          },
        ),
        { numRuns: 500 },
      )
    })

    it('formatCents round-trips to the same number of cents', () => {
      fc.assert(
        fc.property(fc.bigInt({ min: 0n, max: 10n ** 24n }), (c) => {
          assert.equal(BigInt(formatCents(c).replace(/[,.]/g, '')), c)
        }),
      )
    })
  })
})
