// A received UBL 2.1 Invoice or CreditNote (Peppol BIS Billing 3.0, EN 16931) read into this
// service's invoice request and the totals it states.
import { all, attr, text } from './safe-xml.ts'
import { compact, num, perUnit, type ReceivedInvoice } from './received.ts'
import { sellerLegal } from './seller-legal.ts'

type Json = Record<string, any>

/** The seller's legal ids as the request has them (seller-legal.ts). */
function legalOf(p: unknown) {
  return sellerLegal(text(p, 'PartyLegalEntity/CompanyID'), attr(p, 'PartyLegalEntity/CompanyID', 'schemeID'), text(p, 'PartyLegalEntity/CompanyLegalForm'), text(p, 'PostalAddress/Country/IdentificationCode'))
}

function party(p: unknown, seller: boolean): Json | undefined {
  if (!p) return undefined
  const legal = seller ? legalOf(p) : undefined
  const vat = all(p, 'PartyTaxScheme').find((t) => text(t, 'TaxScheme/ID') === 'VAT')
  const other = all(p, 'PartyTaxScheme').find((t) => text(t, 'TaxScheme/ID') !== 'VAT')
  const endpoint = attr(p, 'EndpointID', 'schemeID')
  return {
    name: text(p, 'PartyLegalEntity/RegistrationName') ?? text(p, 'PartyName/Name'),
    street: text(p, 'PostalAddress/StreetName'),
    additional_street: text(p, 'PostalAddress/AdditionalStreetName'),
    city: text(p, 'PostalAddress/CityName'),
    postal_code: text(p, 'PostalAddress/PostalZone'),
    country: text(p, 'PostalAddress/Country/IdentificationCode'),
    vat_id: vat ? text(vat, 'CompanyID') : undefined,
    tax_number: other ? text(other, 'CompanyID') : undefined,
    legal_id: seller ? legal!.legal_id : text(p, 'PartyLegalEntity/CompanyID'),
    siren: legal?.siren,
    register: legal?.register,
    contact: text(p, 'Contact/Name'),
    phone: text(p, 'Contact/Telephone'),
    email: text(p, 'Contact/ElectronicMail') ?? (endpoint === 'EM' ? text(p, 'EndpointID') : undefined),
    peppol_id: endpoint && endpoint !== 'EM' ? `${endpoint}:${text(p, 'EndpointID')}` : undefined,
  }
}

function adjustment(a: unknown, withCategory: boolean): Json {
  return {
    amount: num(text(a, 'Amount')),
    reason: text(a, 'AllowanceChargeReason'),
    reason_code: text(a, 'AllowanceChargeReasonCode'),
    ...(withCategory ? { tax_category: text(a, 'TaxCategory/ID'), tax_rate: num(text(a, 'TaxCategory/Percent')) } : {}),
  }
}

const isCharge = (a: unknown) => text(a, 'ChargeIndicator') === 'true'

export function parseUbl(doc: Json, root: 'Invoice' | 'CreditNote'): ReceivedInvoice {
  const credit = root === 'CreditNote'
  const lines = all(doc, credit ? 'CreditNoteLine' : 'InvoiceLine')
  const docAdjustments = all(doc, 'AllowanceCharge')
  const items = lines.map((l) => {
    const qty = credit ? 'CreditedQuantity' : 'InvoicedQuantity'
    const base = num(text(l, 'Price/BaseQuantity')) ?? 1
    const price = num(text(l, 'Price/PriceAmount')) ?? 0
    const adj = all(l, 'AllowanceCharge')
    return {
      description: text(l, 'Item/Name') ?? text(l, 'Item/Description') ?? '',
      quantity: num(text(l, qty)),
      unit_price: perUnit(price, base),
      unit: attr(l, qty, 'unitCode'),
      tax_category: text(l, 'Item/ClassifiedTaxCategory/ID'),
      tax_rate: num(text(l, 'Item/ClassifiedTaxCategory/Percent')),
      allowances: adj.filter((a) => !isCharge(a)).map((a) => adjustment(a, false)),
      charges: adj.filter(isCharge).map((a) => adjustment(a, false)),
    }
  })
  const means = all(doc, 'PaymentMeans')[0]
  const sellerParty = all(doc, 'AccountingSupplierParty/Party')[0]
  const exemption = all(doc, 'TaxTotal/TaxSubtotal/TaxCategory').map((c) => text(c, 'TaxExemptionReason')).find(Boolean)
  const request = compact({
    document_type: credit || text(doc, 'InvoiceTypeCode') === '381' ? 'credit_note' : 'invoice',
    invoice_number: text(doc, 'ID'),
    date: text(doc, 'IssueDate'),
    due_date: text(doc, 'DueDate') ?? text(means, 'PaymentDueDate'),
    currency: text(doc, 'DocumentCurrencyCode'),
    notes: all(doc, 'Note').map((n) => String(typeof n === 'object' ? n['#text'] ?? '' : n)).join('\n') || undefined,
    buyer_reference: text(doc, 'BuyerReference'),
    order_reference: text(doc, 'OrderReference/ID'),
    preceding_invoice_number: text(doc, 'BillingReference/InvoiceDocumentReference/ID'),
    locale: sellerParty ? legalOf(sellerParty).locale : undefined,
    delivery_date: text(doc, 'Delivery/ActualDeliveryDate'),
    from: party(sellerParty, true),
    to: party(all(doc, 'AccountingCustomerParty/Party')[0], false),
    tax_exemption_reason: exemption,
    payment: {
      iban: text(means, 'PayeeFinancialAccount/ID'),
      bic: text(means, 'PayeeFinancialAccount/FinancialInstitutionBranch/ID'),
      account_name: text(means, 'PayeeFinancialAccount/Name'),
      reference: text(means, 'PaymentID'),
      terms: text(doc, 'PaymentTerms/Note'),
    },
    items,
    allowances: docAdjustments.filter((a) => !isCharge(a)).map((a) => adjustment(a, true)),
    charges: docAdjustments.filter(isCharge).map((a) => adjustment(a, true)),
  })
  const totals = all(doc, 'LegalMonetaryTotal')[0]
  const taxTotals = all(doc, 'TaxTotal')
  const currency = request.currency
  const inCurrency = taxTotals.find((t) => attr(t, 'TaxAmount', 'currencyID') === currency) ?? taxTotals[0]
  const groups = new Map<string, { taxable?: string; tax?: string }>()
  for (const s of all(inCurrency, 'TaxSubtotal')) {
    groups.set(`${text(s, 'TaxCategory/ID')}|${Number(text(s, 'TaxCategory/Percent') ?? 0)}`, { taxable: text(s, 'TaxableAmount'), tax: text(s, 'TaxAmount') })
  }
  return {
    syntax: 'ubl',
    request,
    stated: {
      BT106: text(totals, 'LineExtensionAmount'),
      BT107: text(totals, 'AllowanceTotalAmount'),
      BT108: text(totals, 'ChargeTotalAmount'),
      BT109: text(totals, 'TaxExclusiveAmount'),
      BT110: text(inCurrency, 'TaxAmount'),
      BT112: text(totals, 'TaxInclusiveAmount'),
      BT113: text(totals, 'PrepaidAmount'),
      BT114: text(totals, 'PayableRoundingAmount'),
      BT115: text(totals, 'PayableAmount'),
      groups,
    },
  }
}
