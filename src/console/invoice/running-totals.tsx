// The running totals under the lines, computed in the page exactly as the service computes them
// (totals.ts): each line, the subtotal, allowances and charges, VAT per group and the total. A field
// that is not a number yet shows "—" where it counts, rather than a total the PDF would not have.
import { Fragment } from 'preact'
import type { Draft } from './draft.ts'
import { computeVat, currencyExponent, decimalString, TAX_CATEGORIES, type TaxCategory, type VatTotals } from './totals.ts'

const num = (s: string): number | undefined | null => {
  const t = s.trim()
  if (t === '') return undefined
  return /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i.test(t) && Number.isFinite(Number(t)) ? Number(t) : null
}
const cat = (s: string): TaxCategory | undefined => ((TAX_CATEGORIES as readonly string[]).includes(s) ? (s as TaxCategory) : undefined)

export interface Running {
  /** Each line's amount as printed, or null while one of its numbers is not one. */
  amounts: (string | null)[]
  totals: VatTotals | null
  exp: number
  symbol: string
}

function currencyOf(d: Draft): { exp: number; symbol: string } {
  let exp = 2
  const code = d.currency.trim()
  if (/^[A-Z]{3}$/.test(code)) {
    try {
      exp = currencyExponent(code)
    } catch {
      /* not a currency Intl knows: the service refuses it; totals in cents meanwhile */
    }
  }
  return { exp, symbol: d.currency_symbol || (code ? `${code} ` : '$') }
}

export function running(d: Draft): Running {
  const { exp, symbol } = currencyOf(d)
  const money = (m: bigint) => `${m < 0n ? '-' : ''}${symbol}${decimalString(m < 0n ? -m : m, exp)}`
  const amounts = d.items.map((l) => {
    const q = num(l.quantity)
    const p = num(l.unit_price)
    if (q == null || p == null || q <= 0 || p < 0) return null
    return money(computeVat({ items: [{ quantity: q, unit_price: p }] }, exp).gross[0]!)
  })
  const lineAdj = d.items.flatMap((l) => [...l.allowances, ...l.charges])
  const numbers = [d.tax_rate, d.discount, ...d.items.flatMap((l) => [l.quantity, l.unit_price, l.tax_rate]), ...[...d.allowances, ...d.charges].flatMap((a) => [a.amount, a.tax_rate]), ...lineAdj.map((a) => a.amount)].map(num)
  const adjAmounts = (xs: Draft['allowances']) => xs.map((a) => ({ amount: num(a.amount) as number }))
  const items = d.items.map((l) => ({
    quantity: num(l.quantity) as number,
    unit_price: num(l.unit_price) as number,
    tax_rate: num(l.tax_rate) ?? undefined,
    tax_category: cat(l.tax_category),
    allowances: adjAmounts(l.allowances),
    charges: adjAmounts(l.charges),
  }))
  const valid = !numbers.includes(null) && items.every((i) => i.quantity > 0 && i.unit_price >= 0) && [...lineAdj, ...d.allowances, ...d.charges].every((a) => (num(a.amount) ?? 0) > 0)
  const adj = (a: Draft['allowances'][number]) => ({ amount: num(a.amount) as number, tax_rate: num(a.tax_rate) ?? undefined, tax_category: cat(a.tax_category) })
  const totals = valid
    ? computeVat({ items, tax_rate: num(d.tax_rate) ?? undefined, tax_category: cat(d.tax_category), discount: num(d.discount) ?? undefined, allowances: d.allowances.map(adj), charges: d.charges.map(adj) }, exp)
    : null
  // Once everything counts, a line's amount is its net (BT-131: after its own allowances and charges).
  return { amounts: totals ? totals.lines.map(money) : amounts, totals, exp, symbol }
}

export function RunningTotals({ r }: { r: Running }) {
  const money = (m: bigint) => `${m < 0n ? '-' : ''}${r.symbol}${decimalString(m < 0n ? -m : m, r.exp)}`
  const t = r.totals
  return (
    <section class="running" aria-labelledby="totals-title">
      <h2 id="totals-title">Totals</h2>
      {!t ? (
        <p class="muted">Totals appear once every amount is a number.</p>
      ) : (
        <dl class="totals" aria-live="polite">
          <dt>Subtotal</dt>
          <dd>{money(t.subtotal)}</dd>
          {t.allowanceTotal > 0n && (
            <>
              <dt>Discount and allowances</dt>
              <dd>-{money(t.allowanceTotal)}</dd>
            </>
          )}
          {t.chargeTotal > 0n && (
            <>
              <dt>Charges</dt>
              <dd>{money(t.chargeTotal)}</dd>
            </>
          )}
          {t.groups.map((g) => (
            <Fragment key={`${g.category}|${g.rate}`}>
              <dt>
                VAT {g.category} {g.rate} % on {money(g.taxable)}
              </dt>
              <dd>{money(g.tax)}</dd>
            </Fragment>
          ))}
          <dt class="grand">Total</dt>
          <dd class="grand" id="invoice-total">
            {money(t.total)}
          </dd>
        </dl>
      )}
    </section>
  )
}
