// "To send this back as <format> you would need …" (docs/einvoice-receiving.md): the
// request read from a received e-invoice against this service's own writing rules, per format.
// These are never findings about the received document: they say what /invoice would refuse.
import { invoiceBodySchema } from '../invoice-schema.ts'
import { FORMATS } from '../model/einvoice-schema.ts'
import type { ResendFormat, ResendNeed, Stated } from './read-result.ts'

/** The business term of a request field, for the fields a need most often names. */
const BT_OF: [RegExp, string][] = [
  [/^items\.\d+\.quantity$/, 'BT-129'],
  [/^items\.\d+\.unit_price$/, 'BT-146'],
  [/^items\.\d+\.description$/, 'BT-153'],
  [/^items\.\d+\.tax_rate$/, 'BT-152'],
  [/^items\.\d+\.tax_category$/, 'BT-151'],
  [/^items\.\d+\.unit$/, 'BT-130'],
  [/^items\.\d+\.allowances\.\d+\.amount$/, 'BT-136'],
  [/^items\.\d+\.charges\.\d+\.amount$/, 'BT-141'],
  [/^allowances\.\d+\.amount$/, 'BT-92'],
  [/^charges\.\d+\.amount$/, 'BT-99'],
  [/^allowances\.\d+\.tax_category$/, 'BT-95'],
  [/^charges\.\d+\.tax_category$/, 'BT-102'],
  [/^currency$/, 'BT-5'],
  [/^invoice_number$/, 'BT-1'],
  [/^date$/, 'BT-2'],
  [/^due_date$/, 'BT-9'],
  [/^payment\.iban$/, 'BT-84'],
  [/^payment\.bic$/, 'BT-86'],
  [/^payment\.terms$/, 'BT-20'],
  [/^from\.siren$/, 'BT-30'],
  [/^from\.vat_id$/, 'BT-31'],
  [/^to\.vat_id$/, 'BT-48'],
  [/^from\.peppol_id$/, 'BT-34'],
  [/^to\.peppol_id$/, 'BT-49'],
  [/^buyer_reference$/, 'BT-10'],
  [/^tax_exemption_reason$/, 'BT-120'],
]

const clean = (s: string) => s.replace(/[\u0000-\u001f\u007f-\u009f]+/g, ' ').replace(/\s+/g, ' ').trim()

/** zod's own wording ("Too small: expected number to be >0") said as a request rule. */
function plain(message: string): string {
  const m = /^Too (small|big): expected (\w+) to (?:be|have) ([<>]=?)\s*(-?[\d.]+)(.*)$/.exec(message)
  if (m) {
    const rel = { '>': 'greater than', '>=': 'at least', '<': 'less than', '<=': 'at most' }[m[3]!] ?? m[3]
    return `must be ${m[2] === 'string' || m[2] === 'array' ? `${rel} ${m[4]}${m[5]?.trim() ? ` ${m[5].trim()}` : ''} long` : `${rel} ${m[4]}`}`
  }
  if (/^Invalid input: expected (\w+), received (\w+)$/.test(message)) return `must be a ${/expected (\w+)/.exec(message)![1]}`
  return message
}

function needsFor(request: Record<string, any>, format: ResendFormat): ResendNeed[] {
  const parsed = invoiceBodySchema.safeParse({ ...request, format })
  if (parsed.success) return []
  const out: ResendNeed[] = []
  for (const issue of parsed.error.issues) {
    const path = issue.path.join('.')
    // One issue lists every missing term of a format ("…; …"): one need each.
    for (const part of issue.message.split('; ')) {
      const text = clean(plain(part))
      const bt = path ? BT_OF.find(([re]) => re.test(path))?.[1] : /\((BT-\d+)\)/.exec(text)?.[1]
      out.push({ message: path && !text.startsWith(path) ? `${path}${bt ? ` (${bt})` : ''}: ${text}` : text, ...(path ? { path } : {}), ...(bt ? { bt } : {}) })
    }
  }
  return out
}

export function resendNeeds(request: Record<string, any>, stated: Stated): Record<ResendFormat, ResendNeed[]> {
  // What the request cannot say at all, whatever the format.
  const common: ResendNeed[] = []
  if (stated.totals.BT113 !== undefined && Number(stated.totals.BT113) !== 0) {
    common.push({ bt: 'BT-113', message: `The document states a paid amount (BT-113) of ${stated.totals.BT113}: the request has no field for it, so what /invoice writes shows the whole total as due` })
  }
  if (stated.totals.BT114 !== undefined && Number(stated.totals.BT114) !== 0) {
    common.push({ bt: 'BT-114', message: `The document states a rounding amount (BT-114) of ${stated.totals.BT114}: the request has no field for it, so what /invoice writes has none` })
  }
  stated.lines.forEach((l, i) => {
    const q = Number(l.quantity ?? 'NaN')
    const p = Number(l.unit_price ?? 'NaN') / Number(l.price_base_quantity ?? 1)
    const n = Number(l.net_amount ?? 'NaN')
    const adj = l.allowances.reduce((a, x) => a - Number(x.amount ?? 0), 0) + l.charges.reduce((a, x) => a + Number(x.amount ?? 0), 0)
    if ([q, p, n].every(Number.isFinite) && Math.abs(Math.round(q * p * 100) / 100 + adj - n) >= 0.005) {
      common.push({ path: `items.${i}`, bt: 'BT-131', message: `items.${i} (line ${l.id ?? i + 1}): the stated line net amount (BT-131) ${l.net_amount} is not quantity × price (${l.quantity} × ${l.unit_price}${l.price_base_quantity && l.price_base_quantity !== '1' ? ` per ${l.price_base_quantity}` : ''}), which is what /invoice computes` })
    }
  })
  return Object.fromEntries(FORMATS.map((f) => [f, [...common, ...needsFor(request, f)]])) as Record<ResendFormat, ResendNeed[]>
}
