// What a request must carry before it is answered, by EN 16931 (and XRechnung, Peppol BIS) rule:
// VAT category and rate that belong together (every format), and the business terms each
// e-invoice format needs. Each problem names the request field and its EN 16931 business term
// (`to.vat_id (BT-48) is required for …`) so a client can fix the request in one pass.
import { currencyExponent } from './money.ts'
import { xmlTextProblems } from './einvoice-text.ts'
import { rfReference, swissProblem } from './payment-qr.ts'
import type { InvoiceRequest } from './invoice-request.ts'
import { XML_FORMATS, type InvoiceFormat } from './einvoice-schema.ts'
import { lineTaxOf, type TaxCategory } from './vat.ts'

interface Party {
  name?: string
  email?: string
  phone?: string
  street?: string
  city?: string
  postal_code?: string
  country?: string
  vat_id?: string
  tax_number?: string
  legal_id?: string
  siren?: string
  register?: { number?: string }
  contact?: string
  peppol_id?: string
}

export interface RequirementInput {
  items: { tax_rate?: number; tax_category?: TaxCategory }[]
  /** Document-level allowances and charges: their categories count like the lines'. */
  allowances?: { tax_rate?: number; tax_category?: TaxCategory }[]
  charges?: { tax_rate?: number; tax_category?: TaxCategory }[]
  from?: Party
  to?: Party
  invoice_number?: string
  date?: string
  due_date?: string
  tax_rate?: number
  tax_category?: TaxCategory
  tax_exemption_reason?: string
  format?: InvoiceFormat
  document_type?: 'invoice' | 'credit_note'
  currency?: string
  buyer_reference?: string
  order_reference?: string
  delivery_date?: string
  payment?: { iban?: string; bic?: string; terms?: string; reference?: string; account_name?: string }
  payment_qr?: 'epc' | 'swiss'
}

export interface Problem {
  path: (string | number)[]
  message: string
}

const ISO_DATE = /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$/

/** Category/rate pairs EN 16931 allows (BR-S-05, BR-Z-05, BR-E-05, BR-AE-05, BR-IC-05, BR-G-05, BR-O-05). */
export function rateProblems(req: RequirementInput): Problem[] {
  const out: Problem[] = []
  const check = (category: TaxCategory, rate: number, path: (string | number)[]) => {
    if (category === 'S' && !(rate > 0)) out.push({ path, message: `${fmt(path)} must be > 0 for tax category S (BR-S-05)` })
    if (category !== 'S' && rate !== 0) out.push({ path, message: `${fmt(path)} must be 0 for tax category ${category} (${RATE_RULE[category]})` })
  }
  req.items.forEach((item, i) => {
    const t = lineTaxOf(item, req)
    const own = item.tax_rate !== undefined || item.tax_category !== undefined
    if (own || req.tax_category) check(t.category, t.rate, own ? ['items', i, 'tax_rate'] : ['tax_rate'])
  })
  // One message per field is enough.
  return out.filter((p, i) => out.findIndex((q) => q.message === p.message) === i)
}

const RATE_RULE: Record<TaxCategory, string> = { S: 'BR-S-05', Z: 'BR-Z-05', E: 'BR-E-05', AE: 'BR-AE-05', K: 'BR-IC-05', G: 'BR-G-05', O: 'BR-O-05' }

function fmt(path: (string | number)[]): string {
  return path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i ? `.${p}` : p)).join('')
}

/** The business terms `format` needs and the request lacks; empty when it can be issued. */
export function formatProblems(req: RequirementInput): string[] {
  const format = req.format ?? 'pdf'
  const out: string[] = []
  const need = (ok: unknown, field: string, bt: string, why: string) => {
    if (!ok) out.push(`${field} (${bt}) is required ${why}`)
  }
  if (req.payment_qr) qrProblems(req, out)
  if (!XML_FORMATS.includes(format)) return out
  const f = `for format ${format}`
  const from = req.from ?? {}
  const to = req.to ?? {}
  const adjustments = [...(req.allowances ?? []), ...(req.charges ?? [])].filter((a) => a.tax_category !== undefined || a.tax_rate !== undefined)
  const categories = new Set([...req.items, ...adjustments].map((i) => lineTaxOf(i, req).category))

  out.push(...xmlTextProblems(req as unknown as Parameters<typeof xmlTextProblems>[0], f))
  need(req.invoice_number, 'invoice_number', 'BT-1', f)
  if (req.date !== undefined && !ISO_DATE.test(req.date)) out.push(`date (BT-2) must be a date YYYY-MM-DD ${f}`)
  if (req.due_date !== undefined && !ISO_DATE.test(req.due_date)) out.push(`due_date (BT-9) must be a date YYYY-MM-DD ${f}`)
  need(req.currency, 'currency', 'BT-5', f)
  if (req.currency && currencyExponent(req.currency) > 2) {
    out.push(`currency ${req.currency} has ${currencyExponent(req.currency)} decimal places; EN 16931 amounts have at most 2 (BR-DEC-09) ${f}`)
  }
  need(from.name, 'from.name', 'BT-27', f)
  need(from.country, 'from.country', 'BT-40', f)
  need(to.name, 'to.name', 'BT-44', f)
  need(to.country, 'to.country', 'BT-55', f)

  // A buyer must be able to identify the seller: a tax number (BT-32) alone does not (BR-CO-26).
  // Of the three terms that do, the request has BT-30 and BT-31 (the e-invoice library 2.3.4 does
  // not write a seller identifier BT-29 into CII, so the request offers none).
  // A SIREN or a commercial register number is a legal registration id (BT-30) too.
  if (!from.legal_id && !from.vat_id && !from.siren && !from.register?.number) {
    out.push(`from.legal_id (BT-30) or from.vat_id (BT-31) is required ${f} (BR-CO-26; a tax number, BT-32, does not identify the seller)`)
  }

  // VAT identifiers by category.
  const sellerTaxId = from.vat_id || from.tax_number
  for (const c of ['S', 'Z', 'E'] as const) {
    if (categories.has(c)) need(sellerTaxId, 'from.vat_id', 'BT-31', `(or from.tax_number, BT-32) for tax category ${c} (BR-${c}-02)`)
  }
  if (categories.has('AE')) {
    need(sellerTaxId, 'from.vat_id', 'BT-31', '(or from.tax_number, BT-32) for tax category AE (BR-AE-02)')
    need(to.vat_id || to.legal_id, 'to.vat_id', 'BT-48', '(or to.legal_id, BT-47) for tax category AE (BR-AE-02)')
  }
  if (categories.has('K')) {
    need(from.vat_id, 'from.vat_id', 'BT-31', 'for tax category K (BR-IC-02)')
    need(to.vat_id, 'to.vat_id', 'BT-48', 'for tax category K (BR-IC-02)')
    need(req.delivery_date, 'delivery_date', 'BT-72', 'for tax category K (BR-IC-11)')
  }
  if (categories.has('G')) need(from.vat_id, 'from.vat_id', 'BT-31', 'for tax category G (BR-G-02)')
  if (categories.has('E')) need(req.tax_exemption_reason, 'tax_exemption_reason', 'BT-120', 'for tax category E (BR-E-10)')
  if (categories.has('O')) {
    if (categories.size > 1) out.push('tax category O (not subject to VAT) cannot be combined with other categories in one invoice (BR-O-11)')
    if (from.vat_id) out.push('from.vat_id (BT-31) must be absent for tax category O (BR-O-02)')
    if (to.vat_id) out.push('to.vat_id (BT-48) must be absent for tax category O (BR-O-03)')
  }

  // Payment: an amount due needs a due date or terms (BR-CO-25); UBL credit notes carry no due date.
  const creditNote = req.document_type === 'credit_note'
  if (creditNote && format === 'ubl') need(req.payment?.terms, 'payment.terms', 'BT-20', `for a credit note ${f} (BR-CO-25; a UBL credit note has no due date)`)
  else if (!req.due_date && !req.payment?.terms) out.push(`due_date (BT-9) or payment.terms (BT-20) is required ${f} (BR-CO-25)`)

  if (format === 'ubl') {
    // Peppol BIS addresses both parties by a Peppol participant id: an e-mail is no scheme of its
    // EAS code list (PEPPOL-EN16931-CL008), so it cannot stand in (docs/einvoice.md, "Peppol").
    const email = (p: { email?: string }) => (p.email ? ` (an e-mail address is no Peppol electronic address: PEPPOL-EN16931-CL008)` : '')
    need(from.peppol_id, 'from.peppol_id', 'BT-34', `${f} (PEPPOL-EN16931-R020)${email(from)}`)
    need(to.peppol_id, 'to.peppol_id', 'BT-49', `${f} (PEPPOL-EN16931-R010)${email(to)}`)
  }
  if (format === 'xrechnung') {
    // XRechnung addresses both parties electronically (BT-34, BT-49); there the e-mail (EM) counts.
    need(from.peppol_id || from.email, 'from.email', 'BT-34', `(or from.peppol_id) ${f}`)
    need(to.peppol_id || to.email, 'to.email', 'BT-49', `(or to.peppol_id) ${f}`)
  }
  if (format === 'ubl' && !req.buyer_reference && !req.order_reference) {
    out.push(`buyer_reference (BT-10) or order_reference (BT-13) is required ${f} (PEPPOL-EN16931-R003)`)
  }
  if (format === 'xrechnung') {
    need(req.buyer_reference, 'buyer_reference', 'BT-10', `${f} (BR-DE-15, the Leitweg-ID)`)
    need(from.city, 'from.city', 'BT-37', `${f} (BR-DE-3)`)
    need(from.postal_code, 'from.postal_code', 'BT-38', `${f} (BR-DE-4)`)
    need(to.city, 'to.city', 'BT-52', `${f} (BR-DE-8)`)
    need(to.postal_code, 'to.postal_code', 'BT-53', `${f} (BR-DE-9)`)
    need(from.contact || from.name, 'from.contact', 'BT-41', `${f} (BR-DE-5)`)
    need(from.phone, 'from.phone', 'BT-42', `${f} (BR-DE-6)`)
    need(from.email, 'from.email', 'BT-43', `${f} (BR-DE-7)`)
    need(req.payment?.iban, 'payment.iban', 'BT-84', `${f} (BR-DE-1, BR-DE-23)`)
    need(sellerTaxId, 'from.vat_id', 'BT-31', `(or from.tax_number, BT-32) ${f} (BR-DE-16)`)
  }
  return [...new Set(out)]
}

/** What each payment QR code needs. */
function qrProblems(req: RequirementInput, out: string[]): void {
  const kind = req.payment_qr
  const why = `for payment_qr ${kind}`
  if (req.document_type === 'credit_note') out.push(`payment_qr is not available for a credit note (the seller pays it)`)
  if (!req.payment?.iban) out.push(`payment.iban (BT-84) is required ${why}`)
  if (!(req.from?.name || req.payment?.account_name)) out.push(`from.name (BT-27) is required ${why}`)
  if (kind === 'epc' && req.currency !== 'EUR') out.push(`currency (BT-5) must be EUR ${why}`)
  // A mistyped RF reference would send the payment unmatched: refused rather than sent as text.
  if (kind === 'epc' && rfReference(req.payment?.reference)?.valid === false) {
    out.push(`payment.reference (BT-83) is written as an RF creditor reference but its check digits are wrong (ISO 11649) ${why}`)
  }
  if (kind === 'swiss') {
    if (req.currency !== 'CHF' && req.currency !== 'EUR') out.push(`currency (BT-5) must be CHF or EUR ${why}`)
    if (req.payment?.iban && !/^(CH|LI)/.test(req.payment.iban)) out.push(`payment.iban (BT-84) must be a Swiss or Liechtenstein IBAN ${why}`)
    let complete = true
    for (const [k, bt] of [['street', 'BT-35'], ['city', 'BT-37'], ['postal_code', 'BT-38'], ['country', 'BT-40']] as const) {
      if (!req.from?.[k]) (out.push(`from.${k} (${bt}) is required ${why}`), (complete = false))
    }
    // The rest of the QR-bill's rules (QR-IBAN needs a QR reference, lengths …) are swissqrbill's.
    const problem = complete && out.length === 0 ? swissProblem(req as InvoiceRequest) : null
    if (problem) out.push(`payment_qr swiss: ${problem}`)
  }
}
