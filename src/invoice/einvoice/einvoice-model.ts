// This service's invoice request mapped onto @e-invoice-eu/core's invoice model (EN 16931 in UBL
// terms), which the library then writes as UBL, CII or Factur-X. Amounts come from vat.ts, exact
// in minor units, written with the currency's decimals. The request has passed
// einvoice-requirements.ts, so every term the format needs is present.
import type { Invoice } from '@e-invoice-eu/core'
import { xmlLineBreaks } from '../model/einvoice-text.ts'
import { currencyExponent, decimal, decimalString, formatQuantity } from '../model/money.ts'
import type { InvoiceRequest } from '../invoice-schema.ts'
import { computeVat, type TaxCategory, type VatTotals } from '../model/vat.ts'
import { reasonName } from '../model/allowance-codes.ts'
import { exemptionNote, latePaymentMentions, registerNote } from '../model/legal-wording.ts'

/** Peppol BIS Billing 3.0 (the `ubl` format). */
export const PEPPOL_CUSTOMIZATION = 'urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0'
export const PEPPOL_PROFILE = 'urn:fdc:peppol.eu:2017:poacc:billing:01:1.0'

/** Exemption reason codes (VATEX, BT-121) of the categories that need one; their texts (BT-120) are legal-wording.ts's. */
const EXEMPTION: Partial<Record<TaxCategory, string>> = { AE: 'VATEX-EU-AE', K: 'VATEX-EU-IC', G: 'VATEX-EU-G', O: 'VATEX-EU-O' }

type Party = NonNullable<InvoiceRequest['from']>
type Json = Record<string, unknown>

export function invoiceExponent(req: InvoiceRequest): number {
  return req.currency ? currencyExponent(req.currency) : 2
}

export function buildEInvoice(req: InvoiceRequest, today: string): { invoice: Invoice; totals: VatTotals } {
  const exp = invoiceExponent(req)
  const totals = computeVat(req, exp)
  const currency = req.currency!
  // The model writes an XML attribute as a sibling key "element@attribute".
  const money = (name: string, minor: bigint): Json => ({ [name]: decimalString(minor, exp), [`${name}@currencyID`]: currency })
  const taxCategory = (category: TaxCategory, rate: number, withReason: boolean): Json => {
    const out: Json = { 'cbc:ID': category }
    // Category O has no rate on lines and allowances (BR-O-05…07); XRechnung wants the rate of every
    // VAT breakdown (BR-DE-14), which EN 16931 leaves open for O: there it is 0.
    if (category !== 'O' || (withReason && req.format === 'xrechnung')) out['cbc:Percent'] = formatQuantity(rate)
    if (withReason) {
      const ex = EXEMPTION[category]
      if (category === 'E') out['cbc:TaxExemptionReason'] = req.tax_exemption_reason!
      else if (ex) {
        out['cbc:TaxExemptionReasonCode'] = ex
        out['cbc:TaxExemptionReason'] = req.tax_exemption_reason ?? exemptionNote(category, req.locale)!
      }
    }
    out['cac:TaxScheme'] = { 'cbc:ID': 'VAT' }
    return out
  }

  const inv: Json = {}
  if (req.format === 'ubl') {
    inv['cbc:CustomizationID'] = PEPPOL_CUSTOMIZATION
    inv['cbc:ProfileID'] = PEPPOL_PROFILE
  }
  inv['cbc:ID'] = req.invoice_number!
  inv['cbc:IssueDate'] = req.date ?? today
  if (req.due_date) inv['cbc:DueDate'] = req.due_date
  inv['cbc:InvoiceTypeCode'] = req.document_type === 'credit_note' ? '381' : '380'
  if (req.notes?.trim()) inv['cbc:Note'] = [req.notes]
  inv['cbc:DocumentCurrencyCode'] = currency
  if (req.buyer_reference) inv['cbc:BuyerReference'] = req.buyer_reference
  if (req.order_reference) inv['cac:OrderReference'] = { 'cbc:ID': req.order_reference }
  if (req.preceding_invoice_number) inv['cac:BillingReference'] = [{ 'cac:InvoiceDocumentReference': { 'cbc:ID': req.preceding_invoice_number } }]
  inv['cac:AccountingSupplierParty'] = { 'cac:Party': party(req.from!, true, req.locale) }
  inv['cac:AccountingCustomerParty'] = { 'cac:Party': party(req.to!, false) }
  if (req.delivery_date || totals.groups.some((g) => g.category === 'K')) {
    const delivery: Json = {}
    if (req.delivery_date) delivery['cbc:ActualDeliveryDate'] = req.delivery_date
    delivery['cac:DeliveryLocation'] = { 'cac:Address': address(req.to!) }
    inv['cac:Delivery'] = delivery
  }
  const p = req.payment
  if (p?.iban) {
    const means: Json = { 'cbc:PaymentMeansCode': currency === 'EUR' ? '58' : '30' }
    if (p.reference) means['cbc:PaymentID'] = p.reference
    const account: Json = { 'cbc:ID': p.iban }
    if (p.account_name) account['cbc:Name'] = p.account_name
    if (p.bic) account['cac:FinancialInstitutionBranch'] = { 'cbc:ID': p.bic }
    means['cac:PayeeFinancialAccount'] = account
    inv['cac:PaymentMeans'] = [means]
  }
  // BT-20 carries the penalties too (EN 16931: "including description of possible penalties").
  const terms = [p?.terms, ...latePaymentMentions(req, (m) => `${decimalString(m, exp)} ${currency}`)].filter(Boolean).join('\n')
  if (terms) inv['cac:PaymentTerms'] = { 'cbc:Note': terms }
  // Document-level allowances and charges (BG-20, BG-21): the flat discount's share per VAT group
  // (one category per allowance, BR-32), then the request's own, in the order sent.
  const reason = (kind: 'allowance' | 'charge', a: { reason?: string; reason_code?: string }): Json => {
    const out: Json = {}
    if (a.reason_code) out['cbc:AllowanceChargeReasonCode'] = a.reason_code
    // A code without a text gets its name in the invoice's language, so the XML reads like the PDF.
    const text = a.reason ?? (a.reason_code ? reasonName(kind, a.reason_code, req.locale) : undefined)
    if (text) out['cbc:AllowanceChargeReason'] = text
    return out
  }
  const documentLevel: Json[] = totals.groups
    .filter((g) => g.discount > 0n)
    .map((g) => ({
      'cbc:ChargeIndicator': 'false',
      ...reason('allowance', { reason_code: '95' }),
      ...money('cbc:Amount', g.discount),
      'cac:TaxCategory': taxCategory(g.category, g.rate, false),
    }))
  for (const kind of ['allowance', 'charge'] as const) {
    const sent = (kind === 'allowance' ? req.allowances : req.charges) ?? []
    const computed = kind === 'allowance' ? totals.allowances : totals.charges
    sent.forEach((a, i) => {
      const c = computed[i]!
      documentLevel.push({
        'cbc:ChargeIndicator': kind === 'charge' ? 'true' : 'false',
        ...reason(kind, a),
        ...money('cbc:Amount', c.amount),
        'cac:TaxCategory': taxCategory(c.category, c.rate, false),
      })
    })
  }
  if (documentLevel.length) inv['cac:AllowanceCharge'] = documentLevel
  inv['cac:TaxTotal'] = [
    {
      ...money('cbc:TaxAmount', totals.tax),
      'cac:TaxSubtotal': totals.groups.map((g) => ({
        ...money('cbc:TaxableAmount', g.taxable),
        ...money('cbc:TaxAmount', g.tax),
        'cac:TaxCategory': taxCategory(g.category, g.rate, true),
      })),
    },
  ]
  const legal: Json = {
    ...money('cbc:LineExtensionAmount', totals.subtotal),
    ...money('cbc:TaxExclusiveAmount', totals.taxable),
    ...money('cbc:TaxInclusiveAmount', totals.total),
    ...(totals.allowanceTotal > 0n ? money('cbc:AllowanceTotalAmount', totals.allowanceTotal) : {}),
    ...(totals.chargeTotal > 0n ? money('cbc:ChargeTotalAmount', totals.chargeTotal) : {}),
    ...money('cbc:PayableAmount', totals.total),
  }
  inv['cac:LegalMonetaryTotal'] = legal
  inv['cac:InvoiceLine'] = req.items.map((item, i) => {
    const t = totals.lineTax[i]!
    // Line allowances and charges (BG-27, BG-28) carry no VAT category: the line's applies.
    const adjustments: Json[] = [
      ...(item.allowances ?? []).map((a, j) => ({ 'cbc:ChargeIndicator': 'false', ...reason('allowance', a), ...money('cbc:Amount', totals.lineAllowances[i]![j]!) })),
      ...(item.charges ?? []).map((c, j) => ({ 'cbc:ChargeIndicator': 'true', ...reason('charge', c), ...money('cbc:Amount', totals.lineCharges[i]![j]!) })),
    ]
    return {
      'cbc:ID': String(i + 1),
      'cbc:InvoicedQuantity': formatQuantity(item.quantity),
      'cbc:InvoicedQuantity@unitCode': item.unit ?? 'C62',
      ...money('cbc:LineExtensionAmount', totals.lines[i]!),
      ...(adjustments.length ? { 'cac:AllowanceCharge': adjustments } : {}),
      'cac:Item': { 'cbc:Name': itemName(item.description), 'cac:ClassifiedTaxCategory': taxCategory(t.category, t.rate, false) },
      'cac:Price': price(item.unit_price, item.unit ?? 'C62', currency),
    }
  })
  return { invoice: { 'ubl:Invoice': withLineBreaks(inv) } as unknown as Invoice, totals }
}

/** Every text of the model with its line breaks as the XML writes them (einvoice-text.ts). */
function withLineBreaks<T>(value: T): T {
  if (typeof value === 'string') return xmlLineBreaks(value) as T
  if (Array.isArray(value)) return value.map(withLineBreaks) as T
  if (value === null || typeof value !== 'object') return value
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withLineBreaks(v)])) as T
}

/**
 * BT-146 with at most 2 decimals (the library's amount type): a price with more (0.0125) is
 * written per base quantity (BT-149) of 10^k instead — 1.25 per 100 — which is the same price, exactly.
 */
function price(unitPrice: number, unit: string, currency: string): Json {
  const { int, scale } = decimal(unitPrice)
  if (scale <= 2) return { 'cbc:PriceAmount': formatQuantity(unitPrice), 'cbc:PriceAmount@currencyID': currency }
  return {
    'cbc:PriceAmount': decimalString(int, 2),
    'cbc:PriceAmount@currencyID': currency,
    'cbc:BaseQuantity': (10n ** BigInt(scale - 2)).toString(),
    'cbc:BaseQuantity@unitCode': unit,
  }
}

/** BT-153 is a name: the first line of the description (the rest goes to BT-154). */
function itemName(description: string): string {
  return description.split('\n')[0]!.trim() || description.trim()
}

function address(p: Party): Json {
  const a: Json = {}
  if (p.street) a['cbc:StreetName'] = p.street
  if (p.additional_street) a['cbc:AdditionalStreetName'] = p.additional_street
  if (p.city) a['cbc:CityName'] = p.city
  if (p.postal_code) a['cbc:PostalZone'] = p.postal_code
  a['cac:Country'] = { 'cbc:IdentificationCode': p.country! }
  return a
}

function party(p: Party, seller: boolean, locale?: string): Json {
  const out: Json = {}
  if (p.peppol_id) {
    const [scheme, id] = [p.peppol_id.slice(0, 4), p.peppol_id.slice(5)]
    out['cbc:EndpointID'] = id
    out['cbc:EndpointID@schemeID'] = scheme
  } else if (p.email) {
    out['cbc:EndpointID'] = p.email
    out['cbc:EndpointID@schemeID'] = 'EM'
  }
  out['cac:PostalAddress'] = address(p)
  const schemes: Json[] = []
  if (p.vat_id) schemes.push({ 'cbc:CompanyID': p.vat_id, 'cac:TaxScheme': { 'cbc:ID': 'VAT' } })
  if (seller && p.tax_number) schemes.push({ 'cbc:CompanyID': p.tax_number, 'cac:TaxScheme': { 'cbc:ID': 'FC' } })
  // The seller may have a VAT id and a tax number; the buyer has one scheme (an object, not a list).
  if (schemes.length) out['cac:PartyTaxScheme'] = seller ? schemes : schemes[0]
  const legal: Json = { 'cbc:RegistrationName': p.name! }
  // BT-30: the legal id sent, else the SIREN, else the register number (all identify the seller).
  const legalId = p.legal_id ?? (seller ? (p.siren ?? p.register?.number) : undefined)
  if (legalId) legal['cbc:CompanyID'] = legalId
  // BT-33, the seller's additional legal information: its register entry (CII: einvoice-render.ts).
  const info = seller ? registerNote(p.register, locale) : undefined
  if (info) legal['cbc:CompanyLegalForm'] = info
  out['cac:PartyLegalEntity'] = legal
  if (seller && (p.contact || p.phone || p.email)) {
    const c: Json = {}
    c['cbc:Name'] = p.contact ?? p.name!
    if (p.phone) c['cbc:Telephone'] = p.phone
    if (p.email) c['cbc:ElectronicMail'] = p.email
    out['cac:Contact'] = c
  }
  return out
}
