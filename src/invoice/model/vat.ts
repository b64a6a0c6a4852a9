// The VAT breakdown of an invoice (EN 16931 BG-23): line net amounts (quantity × price less the
// line's allowances plus its charges, BT-131) grouped by tax category and rate, the flat discount
// shared out over the groups, the document-level allowances and charges added to their own
// category and rate, tax per group. Exact in minor units. A request with one invoice-wide rate, no
// line rates and no allowances or charges has one group, and its tax is exactly what computeTotals
// gives (round((subtotal − discount) × rate / 100)): legacy invoices do not change.
import { decimal, divRound, minorOfProduct, toMinor } from './money.ts'

/** EN 16931 VAT category codes (UNCL5305 subset) this service writes. */
export const TAX_CATEGORIES = ['S', 'Z', 'E', 'AE', 'K', 'G', 'O'] as const
export type TaxCategory = (typeof TAX_CATEGORIES)[number]

interface Amount {
  amount: number
}

export interface VatLineInput {
  quantity: number
  unit_price: number
  tax_rate?: number
  tax_category?: TaxCategory
  allowances?: Amount[]
  charges?: Amount[]
}

/** A document-level allowance or charge: its own category and rate (BT-95/96, BT-102/103). */
export interface VatAdjustmentInput extends Amount {
  tax_rate?: number
  tax_category?: TaxCategory
}

export interface VatInput {
  items: VatLineInput[]
  tax_rate?: number
  tax_category?: TaxCategory
  discount?: number
  allowances?: VatAdjustmentInput[]
  charges?: VatAdjustmentInput[]
}

/** A document-level allowance or charge in minor units, with its VAT. */
export interface VatAdjustment {
  amount: bigint
  category: TaxCategory
  rate: number
}

export interface VatGroup {
  category: TaxCategory
  rate: number
  /** Σ line net amounts of the group (BT-131). */
  lines: bigint
  /** The group's share of the flat discount (a BT-92 of its own). */
  discount: bigint
  /** The group's document-level allowances, the discount's share included (Σ BT-92). */
  allowance: bigint
  /** The group's document-level charges (Σ BT-99). */
  charge: bigint
  /** BT-116 = lines − allowance + charge. */
  taxable: bigint
  /** BT-117 = round-half-up(taxable × rate / 100). */
  tax: bigint
}

export interface VatTotals {
  /** Line net amounts (BT-131). */
  lines: bigint[]
  /** Each line's quantity × price, before its own allowances and charges. */
  gross: bigint[]
  lineAllowances: bigint[][]
  lineCharges: bigint[][]
  lineTax: { category: TaxCategory; rate: number }[]
  /** BT-106. */
  subtotal: bigint
  /** The flat discount. */
  discount: bigint
  allowances: VatAdjustment[]
  charges: VatAdjustment[]
  /** BT-107: the discount and every document-level allowance. */
  allowanceTotal: bigint
  /** BT-108. */
  chargeTotal: bigint
  /** BT-109. */
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

const sum = (xs: bigint[]) => xs.reduce((a, b) => a + b, 0n)

export function computeVat(req: VatInput, exp = 2): VatTotals {
  const minor = (a: Amount) => toMinor(a.amount, exp)
  const gross = req.items.map((i) => minorOfProduct(i.quantity, i.unit_price, exp))
  const lineAllowances = req.items.map((i) => (i.allowances ?? []).map(minor))
  const lineCharges = req.items.map((i) => (i.charges ?? []).map(minor))
  const lines = gross.map((g, i) => g - sum(lineAllowances[i]!) + sum(lineCharges[i]!))
  const lineTax = req.items.map((i) => lineTaxOf(i, req))
  const subtotal = sum(lines)
  const discount = toMinor(req.discount ?? 0, exp)
  const adjust = (a: VatAdjustmentInput): VatAdjustment => ({ amount: minor(a), ...lineTaxOf(a, req) })
  const allowances = (req.allowances ?? []).map(adjust)
  const charges = (req.charges ?? []).map(adjust)

  const byKey = new Map<string, VatGroup>()
  const group = (t: { category: TaxCategory; rate: number }) => {
    const key = `${t.category}|${t.rate}`
    let g = byKey.get(key)
    if (!g) byKey.set(key, (g = { category: t.category, rate: t.rate, lines: 0n, discount: 0n, allowance: 0n, charge: 0n, taxable: 0n, tax: 0n }))
    return g
  }
  lineTax.forEach((t, i) => (group(t).lines += lines[i]!))
  for (const a of allowances) group(a).allowance += a.amount
  for (const c of charges) group(c).charge += c.amount
  const groups = [...byKey.values()]
  shareDiscount(groups, discount, subtotal)
  for (const g of groups) {
    g.allowance += g.discount
    g.taxable = g.lines - g.allowance + g.charge
    g.tax = taxOf(g.taxable, g.rate)
  }
  const allowanceTotal = discount + sum(allowances.map((a) => a.amount))
  const chargeTotal = sum(charges.map((c) => c.amount))
  const taxable = subtotal - allowanceTotal + chargeTotal
  const tax = sum(groups.map((g) => g.tax))
  return { lines, gross, lineAllowances, lineCharges, lineTax, subtotal, discount, allowances, charges, allowanceTotal, chargeTotal, taxable, tax, total: taxable + tax, groups }
}

/**
 * The discount is flat and off the subtotal; EN 16931 needs every allowance in one VAT category
 * (BR-32), so it is shared out over the groups in proportion to their line totals, by largest
 * remainder, so the shares add up to the discount exactly. One group takes all of it; a group
 * made only of document-level charges or allowances takes none.
 */
function shareDiscount(groups: VatGroup[], discount: bigint, subtotal: bigint): void {
  if (discount <= 0n || subtotal <= 0n) return
  const shares = groups.map((g) => {
    const num = discount * g.lines
    return { g, floor: num / subtotal, rem: num % subtotal }
  })
  let left = discount - shares.reduce((a, s) => a + s.floor, 0n)
  for (const s of shares) s.g.discount = s.floor
  for (const s of [...shares].sort((a, b) => (b.rem > a.rem ? 1 : b.rem < a.rem ? -1 : 0))) {
    if (left <= 0n) break
    s.g.discount += 1n
    left -= 1n
  }
}
