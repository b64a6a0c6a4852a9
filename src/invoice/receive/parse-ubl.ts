// A received UBL 2.1 Invoice or CreditNote (Peppol BIS Billing 3.0, EN 16931) read into this
// service's invoice request, what it states exactly as written, and the facts its rules ask about.
import { all, attr, rawText, text, valueText } from './safe-xml.ts'
import { compact, defined, num, perUnit, type ReceivedInvoice } from './received.ts'
import type { StatedAdjustment, StatedPaymentMeans } from './read-result.ts'
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

/** BG-20/21 and BG-27/28 as stated; `withCategory` on document level. */
function statedAdjustment(a: unknown, withCategory: boolean): StatedAdjustment {
  return defined({
    amount: text(a, 'Amount'),
    base_amount: text(a, 'BaseAmount'),
    percentage: text(a, 'MultiplierFactorNumeric'),
    reason: text(a, 'AllowanceChargeReason'),
    reason_code: text(a, 'AllowanceChargeReasonCode'),
    vat_category: withCategory ? text(a, 'TaxCategory/ID') : undefined,
    vat_rate: withCategory ? text(a, 'TaxCategory/Percent') : undefined,
  })
}

function paymentMeans(m: unknown, creditor: string | undefined): StatedPaymentMeans {
  return defined({
    code: text(m, 'PaymentMeansCode'),
    text: attr(m, 'PaymentMeansCode', 'name'),
    reference: text(m, 'PaymentID'),
    account: text(m, 'PayeeFinancialAccount/ID'),
    account_name: text(m, 'PayeeFinancialAccount/Name'),
    bic: text(m, 'PayeeFinancialAccount/FinancialInstitutionBranch/ID'),
    card: text(m, 'CardAccount/PrimaryAccountNumberID'),
    card_holder: text(m, 'CardAccount/HolderName'),
    mandate: text(m, 'PaymentMandate/ID'),
    creditor_id: all(m, 'PaymentMandate').length ? creditor : undefined,
    debited_account: text(m, 'PaymentMandate/PayerFinancialAccount/ID'),
  })
}

const endpoint = (p: unknown) => {
  const id = text(p, 'EndpointID')
  return id === undefined ? undefined : { id, scheme: attr(p, 'EndpointID', 'schemeID') }
}

/** Every value of a path in the whole tree (any depth), for the few rules that look everywhere. */
function deep(node: unknown, name: string, out: string[] = []): string[] {
  if (!node || typeof node !== 'object') return out
  for (const [k, v] of Object.entries(node as Json)) {
    for (const x of Array.isArray(v) ? v : [v]) {
      if (k === name) {
        const t = valueText(x)
        if (t) out.push(t)
      }
      deep(x, name, out)
    }
  }
  return out
}

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
  const means = all(doc, 'PaymentMeans').find((m) => text(m, 'PayeeFinancialAccount/ID')) ?? all(doc, 'PaymentMeans')[0]
  const sellerParty = all(doc, 'AccountingSupplierParty/Party')[0]
  const exemption = all(doc, 'TaxTotal/TaxSubtotal/TaxCategory').map((c) => text(c, 'TaxExemptionReason')).find(Boolean)
  const request = compact({
    document_type: credit || text(doc, 'InvoiceTypeCode') === '381' ? 'credit_note' : 'invoice',
    invoice_number: text(doc, 'ID'),
    date: text(doc, 'IssueDate'),
    due_date: text(doc, 'DueDate') ?? text(means, 'PaymentDueDate'),
    currency: text(doc, 'DocumentCurrencyCode'),
    notes: all(doc, 'Note').map(valueText).filter(Boolean).join('\n') || undefined,
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
      terms: rawText(doc, 'PaymentTerms/Note')?.replace(/^\s+/, ''),
    },
    items,
    allowances: docAdjustments.filter((a) => !isCharge(a)).map((a) => adjustment(a, true)),
    charges: docAdjustments.filter(isCharge).map((a) => adjustment(a, true)),
  })
  const totals = all(doc, 'LegalMonetaryTotal')[0]
  const taxTotals = all(doc, 'TaxTotal')
  const currency = text(doc, 'DocumentCurrencyCode')
  const taxCurrency = text(doc, 'TaxCurrencyCode')
  const inCurrency = taxTotals.find((t) => attr(t, 'TaxAmount', 'currencyID') === currency) ?? taxTotals[0]
  // BT-111: the TaxTotal in the VAT accounting currency (the same one when BT-6 = BT-5).
  const inTaxCurrency = taxCurrency ? (taxTotals.find((t) => t !== inCurrency && attr(t, 'TaxAmount', 'currencyID') === taxCurrency) ?? (taxCurrency === currency ? inCurrency : undefined)) : undefined
  const qty = credit ? 'CreditedQuantity' : 'InvoicedQuantity'
  const sellerTax = all(sellerParty, 'PartyTaxScheme')
  const buyerParty = all(doc, 'AccountingCustomerParty/Party')[0]
  const taxRep = all(doc, 'TaxRepresentativeParty')[0]
  const creditor = [sellerParty, all(doc, 'PayeeParty')[0]].flatMap((p) => all(p, 'PartyIdentification/ID')).find((id) => attr({ id }, 'id', 'schemeID') === 'SEPA')
  return {
    syntax: 'ubl',
    request,
    profileId: text(doc, 'CustomizationID'),
    processId: text(doc, 'ProfileID'),
    stated: {
      currency,
      tax_currency: taxCurrency,
      lines: lines.map((l) =>
        defined({
          id: text(l, 'ID'),
          name: text(l, 'Item/Name'),
          quantity: text(l, qty),
          unit: attr(l, qty, 'unitCode'),
          unit_price: text(l, 'Price/PriceAmount'),
          gross_price: text(l, 'Price/AllowanceCharge/BaseAmount'),
          price_base_quantity: text(l, 'Price/BaseQuantity'),
          net_amount: text(l, 'LineExtensionAmount'),
          vat_category: text(l, 'Item/ClassifiedTaxCategory/ID'),
          vat_rate: text(l, 'Item/ClassifiedTaxCategory/Percent'),
          allowances: all(l, 'AllowanceCharge').filter((a) => !isCharge(a)).map((a) => statedAdjustment(a, false)),
          charges: all(l, 'AllowanceCharge').filter(isCharge).map((a) => statedAdjustment(a, false)),
        }),
      ),
      allowances: docAdjustments.filter((a) => !isCharge(a)).map((a) => statedAdjustment(a, true)),
      charges: docAdjustments.filter(isCharge).map((a) => statedAdjustment(a, true)),
      totals: defined({
        BT106: text(totals, 'LineExtensionAmount'),
        BT107: text(totals, 'AllowanceTotalAmount'),
        BT108: text(totals, 'ChargeTotalAmount'),
        BT109: text(totals, 'TaxExclusiveAmount'),
        BT110: text(inCurrency, 'TaxAmount'),
        BT111: inTaxCurrency ? text(inTaxCurrency, 'TaxAmount') : undefined,
        BT112: text(totals, 'TaxInclusiveAmount'),
        BT113: text(totals, 'PrepaidAmount'),
        BT114: text(totals, 'PayableRoundingAmount'),
        BT115: text(totals, 'PayableAmount'),
      }),
      vat_breakdown: all(inCurrency, 'TaxSubtotal').map((t) =>
        defined({
          category: text(t, 'TaxCategory/ID'),
          rate: text(t, 'TaxCategory/Percent'),
          taxable: text(t, 'TaxableAmount'),
          tax: text(t, 'TaxAmount'),
          exemption_reason: text(t, 'TaxCategory/TaxExemptionReason'),
          exemption_code: text(t, 'TaxCategory/TaxExemptionReasonCode'),
        }),
      ),
      payment_means: all(doc, 'PaymentMeans').map((m) => paymentMeans(m, creditor === undefined ? undefined : valueText(creditor))),
      payment_terms: rawText(doc, 'PaymentTerms/Note')?.replace(/^\s+/, ''),
    },
    facts: {
      typeCode: text(doc, credit ? 'CreditNoteTypeCode' : 'InvoiceTypeCode'),
      sellerIds: all(sellerParty, 'PartyIdentification/ID').map(valueText).filter((v): v is string => !!v),
      sellerLegalId: text(sellerParty, 'PartyLegalEntity/CompanyID'),
      sellerLegalScheme: attr(sellerParty, 'PartyLegalEntity/CompanyID', 'schemeID'),
      sellerVatId: sellerTax.filter((t) => text(t, 'TaxScheme/ID') === 'VAT').map((t) => text(t, 'CompanyID')).find(Boolean),
      sellerTaxId: sellerTax.filter((t) => text(t, 'TaxScheme/ID') !== 'VAT').map((t) => text(t, 'CompanyID')).find(Boolean),
      taxRep: taxRep !== undefined,
      taxRepVatId: text(taxRep, 'PartyTaxScheme/CompanyID'),
      buyerLegalId: text(buyerParty, 'PartyLegalEntity/CompanyID'),
      buyerVatId: all(buyerParty, 'PartyTaxScheme').filter((t) => text(t, 'TaxScheme/ID') === 'VAT').map((t) => text(t, 'CompanyID')).find(Boolean),
      sellerEndpoint: endpoint(sellerParty),
      buyerEndpoint: endpoint(buyerParty),
      countries: deep(doc, 'IdentificationCode'),
      deliveryCountry: text(doc, 'Delivery/DeliveryLocation/Address/Country/IdentificationCode'),
      deliveryDate: text(doc, 'Delivery/ActualDeliveryDate'),
      invoicingPeriod: all(doc, 'InvoicePeriod').length > 0,
      dueDate: text(doc, 'DueDate') ?? text(doc, 'PaymentMeans/PaymentDueDate'),
    },
  }
}
