// The invoice's totals in the browser, computed exactly as the service does: a copy of the
// service's money rules (src/invoice/model/money.ts: exact decimals, integer minor units, half-up
// rounding) and VAT breakdown (src/invoice/model/vat.ts: line net amounts, the flat discount shared
// over the VAT groups, document allowances and charges, tax per group). A copy, not an import: the
// console is a browser bundle that imports only src/console/**. test/console-invoice-totals.test.ts
// proves it equal to the service's on generated invoices, so a change there fails until made here.
/** A finite number as an exact decimal: value = int / 10^scale. */
export function decimal(n: number): { int: bigint; scale: number } {
  const [mant, expPart] = String(n).toLowerCase().split('e')
  const exp = expPart ? Number(expPart) : 0
  const neg = mant!.startsWith('-')
  const [whole, frac = ''] = mant!.replace('-', '').split('.')
  let int = BigInt(whole! + frac)
  let scale = frac.length - exp
  if (scale < 0) {
    int *= 10n ** BigInt(-scale)
    scale = 0
  }
  return { int: neg ? -int : int, scale }
}

/** round-half-up(num / den) for non-negative num, positive den. */
export function divRound(num: bigint, den: bigint): bigint {
  return (num * 2n + den) / (den * 2n)
}

/** round-half-up(a × b × 10^exp) in minor units, for a, b ≥ 0 (exp 2: cents). */
export function minorOfProduct(a: number, b: number, exp = 2): bigint {
  const x = decimal(a)
  const y = decimal(b)
  return divRound(x.int * y.int * 10n ** BigInt(exp), 10n ** BigInt(x.scale + y.scale))
}

export function toMinor(amount: number, exp: number): bigint {
  return minorOfProduct(amount, 1, exp)
}

/** Minor-unit digits of an ISO 4217 currency as Intl knows them (EUR 2, JPY 0, BHD 3). */
// Asked of Intl once per currency: a NumberFormat costs ~0.1 ms to build, and a render asks often.
const exponents = new Map<string, number>()

export function currencyExponent(code: string): number {
  let exp = exponents.get(code)
  if (exp === undefined) {
    exp = new Intl.NumberFormat('en', { style: 'currency', currency: code }).resolvedOptions().maximumFractionDigits ?? 2
    exponents.set(code, exp)
  }
  return exp
}

/** Minor units as a plain decimal string with exactly `exp` decimals: 12345, 2 → "123.45". */
export function decimalString(minor: bigint, exp: number): string {
  const neg = minor < 0n
  const abs = (neg ? -minor : minor).toString().padStart(exp + 1, '0')
  const s = exp ? `${abs.slice(0, -exp)}.${abs.slice(-exp)}` : abs
  return neg ? `-${s}` : s
}

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
