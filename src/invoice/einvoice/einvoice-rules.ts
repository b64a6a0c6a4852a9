// The EN 16931 business rules this service is responsible for, checked on every e-invoice before
// it is written: document totals (BR-CO-10…16), VAT breakdown per category and rate (BR-CO-14,
// BR-CO-17, BR-CO-18, BR-x-08), every line's category in the breakdown and back (BR-x-01 style),
// amount decimals (BR-DEC), a seller a buyer can identify (BR-CO-26), and allowances and charges
// with a reason (BR-CO-21…24) and, on the document, a VAT category (BR-32, BR-37). They check the model as the XML will carry it, so an arithmetic
// slip in the mapping fails loudly here instead of reaching a buyer's validator.
import type { Invoice } from '@e-invoice-eu/core'
import { currencyExponent } from '../model/money.ts'

export class BusinessRuleError extends Error {
  constructor(readonly rules: string[]) {
    super(`e-invoice violates EN 16931 business rules: ${rules.join('; ')}`)
  }
}

type Json = Record<string, any>

/** "12.34" → 1234n (hundredths); more than 2 decimals is BR-DEC's concern and reported. */
function hundredths(v: unknown, where: string, errors: string[]): bigint {
  const m = /^(-?)(\d+)(?:\.(\d+))?$/.exec(String(v))
  if (!m) {
    errors.push(`${where}: "${String(v)}" is not an amount`)
    return 0n
  }
  if ((m[3] ?? '').length > 2) errors.push(`BR-DEC: ${where} has more than 2 decimals`)
  const frac = (m[3] ?? '').padEnd(2, '0').slice(0, 2)
  const n = BigInt(m[2]! + frac)
  return m[1] ? -n : n
}

const abs = (n: bigint) => (n < 0n ? -n : n)

/** Rate "19" / "5.5" → [numerator, denominator] of the percentage. */
function ratio(rate: unknown): [bigint, bigint] {
  const [w, f = ''] = String(rate ?? '0').split('.')
  return [BigInt(w! + f), 10n ** BigInt(f.length) * 100n]
}

const key = (cat: Json | undefined) => `${cat?.['cbc:ID']}|${Number(cat?.['cbc:Percent'] ?? 0)}`

/** Every violated rule, as "BR-xx: what"; empty when the invoice is consistent. */
export function businessRuleViolations(model: Invoice): string[] {
  const inv = (model as unknown as Json)['ubl:Invoice'] as Json
  const errors: string[] = []
  const amt = (v: unknown, where: string) => hundredths(v, where, errors)
  const lines: Json[] = inv['cac:InvoiceLine'] ?? []
  const allowances: Json[] = (inv['cac:AllowanceCharge'] ?? []).filter((a: Json) => String(a['cbc:ChargeIndicator']) === 'false')
  const charges: Json[] = (inv['cac:AllowanceCharge'] ?? []).filter((a: Json) => String(a['cbc:ChargeIndicator']) === 'true')
  const totals: Json = inv['cac:LegalMonetaryTotal'] ?? {}
  const taxTotal: Json = (inv['cac:TaxTotal'] ?? [])[0] ?? {}
  const subtotals: Json[] = taxTotal['cac:TaxSubtotal'] ?? []
  // The currency's minor unit in hundredths: 1 for EUR, 100 for JPY.
  const unit = 10n ** BigInt(Math.max(0, 2 - currencyExponent(String(inv['cbc:DocumentCurrencyCode']))))

  const lineSum = lines.reduce((a, l, i) => a + amt(l['cbc:LineExtensionAmount'], `BT-131 of line ${i + 1}`), 0n)
  const allowanceSum = allowances.reduce((a, x, i) => a + amt(x['cbc:Amount'], `BT-92 of allowance ${i + 1}`), 0n)
  const chargeSum = charges.reduce((a, x, i) => a + amt(x['cbc:Amount'], `BT-99 of charge ${i + 1}`), 0n)
  const bt106 = amt(totals['cbc:LineExtensionAmount'], 'BT-106')
  const bt107 = totals['cbc:AllowanceTotalAmount'] === undefined ? 0n : amt(totals['cbc:AllowanceTotalAmount'], 'BT-107')
  const bt108 = totals['cbc:ChargeTotalAmount'] === undefined ? 0n : amt(totals['cbc:ChargeTotalAmount'], 'BT-108')
  const bt109 = amt(totals['cbc:TaxExclusiveAmount'], 'BT-109')
  const bt110 = amt(taxTotal['cbc:TaxAmount'], 'BT-110')
  const bt112 = amt(totals['cbc:TaxInclusiveAmount'], 'BT-112')
  const bt113 = totals['cbc:PrepaidAmount'] === undefined ? 0n : amt(totals['cbc:PrepaidAmount'], 'BT-113')
  const bt115 = amt(totals['cbc:PayableAmount'], 'BT-115')

  if (lineSum !== bt106) errors.push('BR-CO-10: sum of invoice line net amounts (BT-131) differs from BT-106')
  if (allowanceSum !== bt107) errors.push('BR-CO-11: sum of document allowances (BT-92) differs from BT-107')
  if (chargeSum !== bt108) errors.push('BR-CO-12: sum of document charges (BT-99) differs from BT-108')
  if (bt109 !== bt106 - bt107 + bt108) errors.push('BR-CO-13: BT-109 is not BT-106 − BT-107 + BT-108')
  if (bt112 !== bt109 + bt110) errors.push('BR-CO-15: BT-112 is not BT-109 + BT-110')
  if (bt115 !== bt112 - bt113) errors.push('BR-CO-16: BT-115 is not BT-112 − BT-113')
  if (!subtotals.length) errors.push('BR-CO-18: the invoice has no VAT breakdown (BG-23)')

  // Per category and rate: taxable base from the lines and allowances, tax from the base.
  const expected = new Map<string, bigint>()
  lines.forEach((l, i) => {
    const k = key(l['cac:Item']?.['cac:ClassifiedTaxCategory'])
    expected.set(k, (expected.get(k) ?? 0n) + amt(l['cbc:LineExtensionAmount'], `BT-131 of line ${i + 1}`))
  })
  for (const [list, sign] of [[allowances, -1n], [charges, 1n]] as const) {
    for (const a of list) {
      const k = key(a['cac:TaxCategory'])
      expected.set(k, (expected.get(k) ?? 0n) + sign * amt(a['cbc:Amount'], 'BT-92/BT-99'))
    }
  }
  let taxSum = 0n
  const seen = new Set<string>()
  for (const s of subtotals) {
    const cat = s['cac:TaxCategory'] ?? {}
    const k = key(cat)
    const id = String(cat['cbc:ID'])
    const label = `category ${id} at ${Number(cat['cbc:Percent'] ?? 0)}%`
    if (seen.has(k)) errors.push(`BR-CO-17: ${label} appears twice in the VAT breakdown`)
    seen.add(k)
    const base = amt(s['cbc:TaxableAmount'], `BT-116 of ${label}`)
    const tax = amt(s['cbc:TaxAmount'], `BT-117 of ${label}`)
    taxSum += tax
    if (!expected.has(k)) errors.push(`BR-${ruleId(id)}-08: VAT breakdown for ${label} has no invoice line in it`)
    else if (expected.get(k) !== base) errors.push(`BR-${ruleId(id)}-08: taxable amount (BT-116) of ${label} is not the sum of its lines less allowances`)
    // Rounded to the currency's minor unit: at most half a unit from the exact product.
    const [n, d] = ratio(cat['cbc:Percent'])
    if (abs(tax * d - base * n) * 2n > unit * d) errors.push(`BR-CO-17: VAT amount (BT-117) of ${label} is not BT-116 × rate, rounded`)
  }
  for (const k of expected.keys()) {
    const [id] = k.split('|')
    if (!seen.has(k)) errors.push(`BR-${ruleId(id!)}-01: invoice lines in category ${id} at ${k.split('|')[1]}% have no VAT breakdown`)
  }
  if (taxSum !== bt110) errors.push('BR-CO-14: invoice VAT total (BT-110) is not the sum of the category VAT amounts (BT-117)')
  const hasReason = (a: Json) => Boolean(a['cbc:AllowanceChargeReason'] || a['cbc:AllowanceChargeReasonCode'])
  allowances.forEach((a, i) => {
    if (!hasReason(a)) errors.push(`BR-CO-21: document allowance ${i + 1} has no reason (BT-97) or reason code (BT-98)`)
    if (!a['cac:TaxCategory']?.['cbc:ID']) errors.push(`BR-32: document allowance ${i + 1} has no VAT category (BT-95)`)
  })
  charges.forEach((c, i) => {
    if (!hasReason(c)) errors.push(`BR-CO-22: document charge ${i + 1} has no reason (BT-104) or reason code (BT-105)`)
    if (!c['cac:TaxCategory']?.['cbc:ID']) errors.push(`BR-37: document charge ${i + 1} has no VAT category (BT-102)`)
  })
  lines.forEach((l, i) => {
    for (const a of (l['cac:AllowanceCharge'] ?? []) as Json[]) {
      const charge = String(a['cbc:ChargeIndicator']) === 'true'
      if (!hasReason(a)) errors.push(charge ? `BR-CO-24: a charge of line ${i + 1} has no reason (BT-144) or reason code (BT-145)` : `BR-CO-23: an allowance of line ${i + 1} has no reason (BT-139) or reason code (BT-140)`)
    }
  })
  if (!identifiesSeller(inv['cac:AccountingSupplierParty']?.['cac:Party'] ?? {})) {
    errors.push('BR-CO-26: the seller has no identifier (BT-29), legal registration id (BT-30) or VAT id (BT-31)')
  }
  return errors
}

function identifiesSeller(party: Json): boolean {
  const list = (v: unknown): Json[] => (Array.isArray(v) ? v : v ? [v as Json] : [])
  return (
    list(party['cac:PartyIdentification']).some((p) => p['cbc:ID']) ||
    Boolean(party['cac:PartyLegalEntity']?.['cbc:CompanyID']) ||
    list(party['cac:PartyTaxScheme']).some((t) => t['cbc:CompanyID'] && t['cac:TaxScheme']?.['cbc:ID'] === 'VAT')
  )
}

function ruleId(category: string): string {
  return category === 'K' ? 'IC' : category
}

export function assertBusinessRules(model: Invoice, _totals?: unknown): void {
  const violations = businessRuleViolations(model)
  if (violations.length) throw new BusinessRuleError(violations)
}
