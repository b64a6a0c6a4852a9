// What a received e-invoice is read into: the fields of this service's invoice request (so it can
// be posted back to /invoice) and the totals the document states, which checks.ts compares with
// the totals this service computes from its lines.
export type Syntax = 'ubl' | 'cii'

/** Document totals as written (decimal strings), by business term. */
export interface StatedTotals {
  BT106?: string
  BT107?: string
  BT108?: string
  BT109?: string
  BT110?: string
  BT112?: string
  /** Paid amount and rounding amount: BT-115 = BT-112 − BT-113 + BT-114 (BR-CO-16). */
  BT113?: string
  BT114?: string
  BT115?: string
  /** BT-116 / BT-117 per category and rate: "S|19" → taxable, tax. */
  groups: Map<string, { taxable?: string; tax?: string }>
}

export interface ReceivedInvoice {
  syntax: Syntax
  request: Record<string, any>
  stated: StatedTotals
}

/** A decimal string as a number; undefined stays undefined. */
export const num = (s: string | undefined): number | undefined => (s === undefined || s.trim() === '' ? undefined : Number(s))

/** Drops undefined fields, empty lists and empty objects, so the request carries only what the document had. */
export function compact<T>(v: T): T {
  if (Array.isArray(v)) return v.map(compact) as T
  if (v && typeof v === 'object') {
    const out: Record<string, unknown> = {}
    for (const [k, x] of Object.entries(v)) {
      const c = compact(x)
      if (c === undefined || (Array.isArray(c) && c.length === 0)) continue
      if (c && typeof c === 'object' && !Array.isArray(c) && Object.keys(c).length === 0) continue
      out[k] = c
    }
    return out as T
  }
  return v
}

/** A price per base quantity as a unit price: 3333.33 per 10 → 333.333, without the float tail of the division. */
export const perUnit = (price: number, base: number): number => (base === 1 ? price : Number((price / base).toPrecision(12)))
