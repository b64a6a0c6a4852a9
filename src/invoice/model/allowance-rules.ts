// The rules an invoice's allowances and charges must meet before anything is rendered, in every
// format (docs/einvoice.md, "Allowances and charges"): a reason or a reason code (BR-CO-21…24), a
// VAT category for the document's own (BR-32, BR-37) that fits its rate (BR-x-06, BR-x-07), and
// amounts that leave no line net amount (BT-131), no VAT group's taxable amount (BT-116) and no
// total negative. Each problem names the field and its business term.
import { ADJUSTMENT_TERMS } from './allowance-schema.ts'
import type { Problem } from './einvoice-requirements.ts'
import { computeVat, lineTaxOf, type TaxCategory, type VatInput } from './vat.ts'

interface Adjustment {
  amount: number
  reason?: string
  reason_code?: string
  tax_rate?: number
  tax_category?: TaxCategory
}

export interface AdjustmentInput extends VatInput {
  items: (VatInput['items'][number] & { allowances?: Adjustment[]; charges?: Adjustment[] })[]
  allowances?: Adjustment[]
  charges?: Adjustment[]
}

const RULE_ID: Record<TaxCategory, string> = { S: 'S', Z: 'Z', E: 'E', AE: 'AE', K: 'IC', G: 'G', O: 'O' }
const REASON_RULE = { document: { allowance: 'BR-CO-21', charge: 'BR-CO-22' }, line: { allowance: 'BR-CO-23', charge: 'BR-CO-24' } } as const
const fmt = (path: (string | number)[]) => path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i ? `.${p}` : p)).join('')

/** Every problem of the request's allowances and charges; empty when there is none. */
export function adjustmentProblems(req: AdjustmentInput, exp: number): Problem[] {
  const out: Problem[] = []
  const reason = (a: Adjustment, path: (string | number)[], level: 'document' | 'line', kind: 'allowance' | 'charge') => {
    if (a.reason || a.reason_code) return
    const bt = ADJUSTMENT_TERMS[level][kind]
    out.push({ path: [...path, 'reason'], message: `${fmt([...path, 'reason'])} (${bt.reason}) or ${fmt([...path, 'reason_code'])} (${bt.reason_code}) is required (${REASON_RULE[level][kind]})` })
  }
  req.items.forEach((item, i) => {
    item.allowances?.forEach((a, j) => reason(a, ['items', i, 'allowances', j], 'line', 'allowance'))
    item.charges?.forEach((c, j) => reason(c, ['items', i, 'charges', j], 'line', 'charge'))
  })
  for (const kind of ['allowance', 'charge'] as const) {
    const field = kind === 'allowance' ? 'allowances' : 'charges'
    const bt = ADJUSTMENT_TERMS.document[kind]
    req[field]?.forEach((a, j) => {
      const path = [field, j]
      reason(a, path, 'document', kind)
      if (a.tax_category === undefined && a.tax_rate === undefined) {
        out.push({ path: [...path, 'tax_category'], message: `${fmt([...path, 'tax_category'])} (${bt.tax_category}) is required, or ${fmt([...path, 'tax_rate'])} (${bt.tax_rate}) for category S or Z (${kind === 'allowance' ? 'BR-32' : 'BR-37'})` })
        return
      }
      const t = lineTaxOf(a, req)
      const rule = `BR-${RULE_ID[t.category]}-${kind === 'allowance' ? '06' : '07'}`
      const ratePath = fmt([...path, 'tax_rate'])
      if (t.category === 'S' && !(t.rate > 0)) out.push({ path: [...path, 'tax_rate'], message: `${ratePath} (${bt.tax_rate}) must be > 0 for tax category S (${rule})` })
      if (t.category !== 'S' && t.rate !== 0) out.push({ path: [...path, 'tax_rate'], message: `${ratePath} (${bt.tax_rate}) must be 0 for tax category ${t.category} (${rule})` })
    })
  }
  if (out.length) return out
  // Quantities are > 0 and prices ≥ 0: without allowances, charges or a discount no amount can go
  // negative, and computing them for nothing was a third of the request's validation.
  const adjusted = req.allowances?.length || req.charges?.length || req.discount || req.items.some((it) => it.allowances?.length || it.charges?.length)
  if (!adjusted) return out

  // Amounts: computed as the documents will carry them.
  const v = computeVat(req, exp)
  v.lines.forEach((net, i) => {
    if (net < 0n) out.push({ path: ['items', i, 'allowances'], message: `items[${i}].allowances exceed the line's amount plus its charges: its net amount (BT-131) would be negative` })
  })
  if (out.length) return out
  if (v.discount > v.subtotal) out.push({ path: ['discount'], message: 'discount must not exceed the subtotal' })
  for (const g of v.groups) {
    if (g.taxable < 0n) {
      out.push({ path: ['allowances'], message: `allowances exceed the lines and charges in tax category ${g.category} at ${g.rate}%: its taxable amount (BT-116) would be negative` })
    }
  }
  return out
}
