// The VAT breakdown of an invoice (EN 16931 BG-23): lines grouped by tax category and rate, the
// flat discount shared out over the groups, tax per group. Exact in minor units. A request with
// one invoice-wide rate and no line rates has one group, and its tax is exactly what
// computeTotals gives (round((subtotal − discount) × rate / 100)): legacy invoices do not change.
import { decimal, divRound, minorOfProduct, toMinor } from './money.ts'

/** EN 16931 VAT category codes (UNCL5305 subset) this service writes. */
export const TAX_CATEGORIES = ['S', 'Z', 'E', 'AE', 'K', 'G', 'O'] as const
export type TaxCategory = (typeof TAX_CATEGORIES)[number]

export interface VatLineInput {
  quantity: number
  unit_price: number
  tax_rate?: number
  tax_category?: TaxCategory
}

export interface VatInput {
  items: VatLineInput[]
  tax_rate?: number
  tax_category?: TaxCategory
  discount?: number
}

export interface VatGroup {
  category: TaxCategory
  rate: number
  /** Σ line net amounts of the group (BT-131). */
  lines: bigint
  /** The group's share of the document discount (BT-92). */
  allowance: bigint
  /** BT-116 = lines − allowance. */
  taxable: bigint
  /** BT-117 = round-half-up(taxable × rate / 100). */
  tax: bigint
}

export interface VatTotals {
  lines: bigint[]
  lineTax: { category: TaxCategory; rate: number }[]
  subtotal: bigint
  discount: bigint
  taxable: bigint
  tax: bigint
  total: bigint
  groups: VatGroup[]
}

/** A line's category and rate: its own, else the invoice's; a rate alone means S (> 0) or Z (0). */
export function lineTaxOf(item: { tax_rate?: number; tax_category?: TaxCategory }, inv: { tax_rate?: number; tax_category?: TaxCategory }): { category: TaxCategory; rate: number } {
  if (item.tax_category) {
    // Only a standard-rated line (or one in the invoice's own category) takes the invoice's rate.
    const inherits = item.tax_category === 'S' || item.tax_category === inv.tax_category
    return { category: item.tax_category, rate: item.tax_rate ?? (inherits ? inv.tax_rate : undefined) ?? 0 }
  }
  if (item.tax_rate !== undefined) return { category: item.tax_rate > 0 ? 'S' : 'Z', rate: item.tax_rate }
  const rate = inv.tax_rate ?? 0
  return { category: inv.tax_category ?? (rate > 0 ? 'S' : 'Z'), rate }
}

export function taxOf(taxable: bigint, rate: number): bigint {
  const r = decimal(rate)
  return taxable > 0n ? divRound(taxable * r.int, 100n * 10n ** BigInt(r.scale)) : 0n
}

export function computeVat(req: VatInput, exp = 2): VatTotals {
  const lines = req.items.map((i) => minorOfProduct(i.quantity, i.unit_price, exp))
  const lineTax = req.items.map((i) => lineTaxOf(i, req))
  const subtotal = lines.reduce((a, b) => a + b, 0n)
  const discount = toMinor(req.discount ?? 0, exp)

  const byKey = new Map<string, VatGroup>()
  lineTax.forEach((t, i) => {
    const key = `${t.category}|${t.rate}`
    const g = byKey.get(key) ?? { category: t.category, rate: t.rate, lines: 0n, allowance: 0n, taxable: 0n, tax: 0n }
    g.lines += lines[i]!
    byKey.set(key, g)
  })
  const groups = [...byKey.values()]
  shareDiscount(groups, discount, subtotal)
  for (const g of groups) {
    g.taxable = g.lines - g.allowance
    g.tax = taxOf(g.taxable, g.rate)
  }
  const taxable = subtotal - discount
  const tax = groups.reduce((a, g) => a + g.tax, 0n)
  return { lines, lineTax, subtotal, discount, taxable, tax, total: taxable + tax, groups }
}

/**
 * The discount is flat and off the subtotal; EN 16931 needs every allowance in one VAT category
 * (BR-32), so it is shared out over the groups in proportion to their line totals, by largest
 * remainder, so the shares add up to the discount exactly. One group takes all of it.
 */
function shareDiscount(groups: VatGroup[], discount: bigint, subtotal: bigint): void {
  if (discount <= 0n || subtotal <= 0n) return
  const shares = groups.map((g) => {
    const num = discount * g.lines
    return { g, floor: num / subtotal, rem: num % subtotal }
  })
  let left = discount - shares.reduce((a, s) => a + s.floor, 0n)
  for (const s of shares) s.g.allowance = s.floor
  for (const s of [...shares].sort((a, b) => (b.rem > a.rem ? 1 : b.rem < a.rem ? -1 : 0))) {
    if (left <= 0n) break
    s.g.allowance += 1n
    left -= 1n
  }
}
