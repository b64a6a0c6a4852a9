// What a received e-invoice is read into: the fields of this service's invoice request (so it can
// be posted back to /invoice), what the document states exactly as written (read-result.ts), and
// the few header facts the EN 16931 rules ask about that neither of those carries.
import type { Stated } from './read-result.ts'

export type Syntax = 'ubl' | 'cii'

/** Header facts the rules need (presence of identifiers, codes), as written. */
export interface Facts {
  /** BT-3 */
  typeCode?: string
  /** BT-29 seller identifiers, BT-30 legal id, BT-31 VAT id, BT-32 tax registration id. */
  sellerIds: string[]
  sellerLegalId?: string
  sellerLegalScheme?: string
  sellerVatId?: string
  sellerTaxId?: string
  /** BT-63 tax representative VAT id; BG-11 present at all. */
  taxRepVatId?: string
  taxRep: boolean
  /** BT-47, BT-48 */
  buyerLegalId?: string
  buyerVatId?: string
  /** BT-34, BT-49 with their scheme (absent scheme: undefined). */
  sellerEndpoint?: { id: string; scheme?: string }
  buyerEndpoint?: { id: string; scheme?: string }
  /** Every country code in the document (BR-B-01: split payment is Italian only). */
  countries: string[]
  /** BT-80 deliver-to country, BT-72 actual delivery date, BG-14 invoicing period present. */
  deliveryCountry?: string
  deliveryDate?: string
  invoicingPeriod: boolean
  /** BT-9 */
  dueDate?: string
}

export interface ReceivedInvoice {
  syntax: Syntax
  request: Record<string, any>
  stated: Stated
  /** BT-24 and BT-23 as written. */
  profileId?: string
  processId?: string
  facts: Facts
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

/** Drops undefined fields only (the stated shape keeps its empty lists). */
export function defined<T extends object>(v: T): T {
  return Object.fromEntries(Object.entries(v).filter(([, x]) => x !== undefined)) as T
}

/** A price per base quantity as a unit price: 3333.33 per 10 → 333.333, without the float tail of the division. */
export const perUnit = (price: number, base: number): number => (base === 1 ? price : Number((price / base).toPrecision(12)))
