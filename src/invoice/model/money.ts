// Invoice arithmetic in integer minor units (cents unless an ISO currency with other minor units
// is given: JPY 0, BHD 3), exact: numbers are read as the decimals the client wrote (1.005 is
// 1.005, not 1.00499…) and products are rounded half up (docs/invoice.md, "Decisions where the
// spec is silent").
//   line = round(quantity × unit_price); subtotal = Σ lines; discount is flat, off the subtotal;
//   tax = round((subtotal − discount) × tax_rate / 100); total = subtotal − discount + tax.

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

export function toCents(amount: number): bigint {
  return minorOfProduct(amount, 1)
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

export interface LineInput {
  quantity: number
  unit_price: number
}

export interface Totals {
  lines: bigint[]
  subtotal: bigint
  discount: bigint
  taxable: bigint
  tax: bigint
  total: bigint
}

export function computeTotals(items: LineInput[], opts: { discount?: number; tax_rate?: number }, exp = 2): Totals {
  const lines = items.map((i) => minorOfProduct(i.quantity, i.unit_price, exp))
  const subtotal = lines.reduce((a, b) => a + b, 0n)
  const discount = toMinor(opts.discount ?? 0, exp)
  const taxable = subtotal - discount
  const rate = decimal(opts.tax_rate ?? 0)
  const tax = taxable > 0n ? divRound(taxable * rate.int, 100n * 10n ** BigInt(rate.scale)) : 0n
  return { lines, subtotal, discount, taxable, tax, total: taxable + tax }
}

/** 123456 → "1,234.56" (no symbol). */
export function formatCents(cents: bigint): string {
  const neg = cents < 0n
  const abs = neg ? -cents : cents
  const whole = (abs / 100n).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ',')
  const frac = (abs % 100n).toString().padStart(2, '0')
  return `${neg ? '-' : ''}${whole}.${frac}`
}

export function formatMoney(cents: bigint, symbol: string): string {
  const s = formatCents(cents < 0n ? -cents : cents)
  return `${cents < 0n ? '-' : ''}${symbol}${s}`
}

/** Quantities print as written: 2 → "2", 1.5 → "1.5". */
export function formatQuantity(q: number): string {
  const { int, scale } = decimal(q)
  if (scale === 0) return int.toString()
  const s = int.toString().padStart(scale + 1, '0')
  return `${s.slice(0, -scale)}.${s.slice(-scale)}`
}

/** Unit prices keep sub-cent precision when given (0.0125 stays 0.0125), else two decimals. */
export function formatUnitPrice(price: number, symbol: string): string {
  const { scale } = decimal(price)
  if (scale <= 2) return formatMoney(toCents(price), symbol)
  const [whole, frac] = formatQuantity(price).split('.')
  return `${symbol}${whole!.replace(/\B(?=(\d{3})+(?!\d))/g, ',')}.${frac}`
}
