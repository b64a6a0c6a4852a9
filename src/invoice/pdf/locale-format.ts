// How amounts, prices, quantities, rates and dates print. A request with neither `locale` nor
// `currency` prints as it always has ($1,234.56, dates as written). With either, Intl formats
// them for the locale (English when only a currency is given), with the currency's own minor
// units (JPY 0, BHD 3) and ISO dates written out (2. November 2026).
import { currencyExponent, decimal, decimalString, formatMoney, formatQuantity, formatUnitPrice } from '../model/money.ts'
import type { InvoiceLocale } from '../model/einvoice-schema.ts'

export interface InvoiceFormatter {
  /** Minor-unit digits amounts are computed in. */
  exp: number
  money(minor: bigint): string
  unitPrice(price: number): string
  quantity(q: number): string
  rate(r: number): string
  date(s: string): string
  country(code: string): string
}

const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/

// Intl formatters are costly to build (~0.1 ms each) and immutable: built once per thread for each
// locale, currency and precision, instead of a few per document and one per line's unit price.
const intl = new Map<string, Intl.NumberFormat | Intl.DateTimeFormat | Intl.DisplayNames>()
function cached<T extends Intl.NumberFormat | Intl.DateTimeFormat | Intl.DisplayNames>(key: string, make: () => T): T {
  let f = intl.get(key) as T | undefined
  if (!f) intl.set(key, (f = make()))
  return f
}

export function formatterFor(req: { locale?: InvoiceLocale; currency?: string; currency_symbol?: string }, symbol: string): InvoiceFormatter {
  if (!req.locale && !req.currency) {
    return {
      exp: 2,
      money: (c) => formatMoney(c, symbol),
      unitPrice: (p) => formatUnitPrice(p, symbol),
      quantity: formatQuantity,
      rate: formatQuantity,
      date: (s) => s,
      country: (c) => c,
    }
  }
  const loc = req.locale ?? 'en'
  const exp = req.currency ? currencyExponent(req.currency) : 2
  const plain = cached(`plain ${loc}`, () => new Intl.NumberFormat(loc, { maximumFractionDigits: 20 }))
  const amount = (digits: number) =>
    cached(`amount ${loc} ${req.currency ?? ''} ${exp} ${Math.max(exp, digits)}`, () =>
      req.currency
        ? new Intl.NumberFormat(loc, { style: 'currency', currency: req.currency, minimumFractionDigits: exp, maximumFractionDigits: Math.max(exp, digits) })
        : new Intl.NumberFormat(loc, { minimumFractionDigits: exp, maximumFractionDigits: Math.max(exp, digits) }),
    )
  const money = amount(exp)
  // Without an ISO currency the request's symbol goes in front, as it always has.
  const withSymbol = (s: string) => (req.currency ? s : s.startsWith('-') ? `-${symbol}${s.slice(1)}` : `${symbol}${s}`)
  const dates = cached(`dates ${loc}`, () => new Intl.DateTimeFormat(loc, { dateStyle: 'long', timeZone: 'UTC' }))
  const regions = cached(`regions ${loc}`, () => new Intl.DisplayNames([loc], { type: 'region' }))
  // Intl takes decimal strings exactly (no binary rounding on the way).
  const fmt = (nf: Intl.NumberFormat, s: string) => nf.format(s as unknown as number)
  return {
    exp,
    money: (c) => withSymbol(fmt(money, decimalString(c, exp))),
    unitPrice: (p) => withSymbol(fmt(amount(decimal(p).scale), formatQuantity(p))),
    quantity: (q) => fmt(plain, formatQuantity(q)),
    rate: (r) => fmt(plain, formatQuantity(r)),
    date: (s) => {
      const m = ISO_DATE.exec(s)
      return m ? dates.format(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]))) : s
    },
    country: (c) => regions.of(c) ?? c,
  }
}
