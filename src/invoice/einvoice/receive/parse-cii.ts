// A received UN/CEFACT CII D16B invoice (XRechnung CII, the XML inside Factur-X/ZUGFeRD) read into
// this service's invoice request and the totals it states.
import { all, attr, text } from './safe-xml.ts'
import { compact, num, perUnit, type ReceivedInvoice } from './received.ts'
import { sellerLegal } from './seller-legal.ts'

type Json = Record<string, any>

/** Format 102 (YYYYMMDD) → YYYY-MM-DD; anything else is kept as written. */
function date(node: unknown, path: string): string | undefined {
  const s = text(node, `${path}/DateTimeString`)
  const m = s ? /^(\d{4})(\d{2})(\d{2})$/.exec(s) : null
  return m ? `${m[1]}-${m[2]}-${m[3]}` : s
}

/** The seller's legal ids as the request has them (seller-legal.ts); BT-33 is the party's Description. */
function legalOf(p: unknown) {
  return sellerLegal(text(p, 'SpecifiedLegalOrganization/ID'), attr(p, 'SpecifiedLegalOrganization/ID', 'schemeID'), text(p, 'Description'), text(p, 'PostalTradeAddress/CountryID'))
}

function party(p: unknown, seller: boolean): Json | undefined {
  if (!p) return undefined
  const legal = seller ? legalOf(p) : undefined
  const reg = (scheme: string) => all(p, 'SpecifiedTaxRegistration').find((r) => attr(r, 'ID', 'schemeID') === scheme)
  const uri = all(p, 'URIUniversalCommunication')[0]
  const uriScheme = attr(uri, 'URIID', 'schemeID')
  return {
    name: text(p, 'Name'),
    street: text(p, 'PostalTradeAddress/LineOne'),
    additional_street: text(p, 'PostalTradeAddress/LineTwo'),
    city: text(p, 'PostalTradeAddress/CityName'),
    postal_code: text(p, 'PostalTradeAddress/PostcodeCode'),
    country: text(p, 'PostalTradeAddress/CountryID'),
    vat_id: reg('VA') ? text(reg('VA'), 'ID') : undefined,
    tax_number: reg('FC') ? text(reg('FC'), 'ID') : undefined,
    legal_id: seller ? legal!.legal_id : text(p, 'SpecifiedLegalOrganization/ID'),
    siren: legal?.siren,
    register: legal?.register,
    contact: text(p, 'DefinedTradeContact/PersonName'),
    phone: text(p, 'DefinedTradeContact/TelephoneUniversalCommunication/CompleteNumber'),
    email: text(p, 'DefinedTradeContact/EmailURIUniversalCommunication/URIID') ?? (uriScheme === 'EM' ? text(uri, 'URIID') : undefined),
    peppol_id: uriScheme && uriScheme !== 'EM' ? `${uriScheme}:${text(uri, 'URIID')}` : undefined,
  }
}

const isCharge = (a: unknown) => text(a, 'ChargeIndicator/Indicator') === 'true'

function adjustment(a: unknown, withCategory: boolean): Json {
  return {
    amount: num(text(a, 'ActualAmount')),
    reason: text(a, 'Reason'),
    reason_code: text(a, 'ReasonCode'),
    ...(withCategory ? { tax_category: text(a, 'CategoryTradeTax/CategoryCode'), tax_rate: num(text(a, 'CategoryTradeTax/RateApplicablePercent')) } : {}),
  }
}

export function parseCii(doc: Json): ReceivedInvoice {
  const header = all(doc, 'ExchangedDocument')[0]
  const trade = all(doc, 'SupplyChainTradeTransaction')[0]
  const agreement = all(trade, 'ApplicableHeaderTradeAgreement')[0]
  const settlement = all(trade, 'ApplicableHeaderTradeSettlement')[0]
  const means = all(settlement, 'SpecifiedTradeSettlementPaymentMeans')[0]
  const items = all(trade, 'IncludedSupplyChainTradeLineItem').map((l) => {
    const price = all(l, 'SpecifiedLineTradeAgreement/NetPriceProductTradePrice')[0]
    const base = num(text(price, 'BasisQuantity')) ?? 1
    const amount = num(text(price, 'ChargeAmount')) ?? 0
    const lineSettlement = all(l, 'SpecifiedLineTradeSettlement')[0]
    const adj = all(lineSettlement, 'SpecifiedTradeAllowanceCharge')
    return {
      description: text(l, 'SpecifiedTradeProduct/Name') ?? '',
      quantity: num(text(l, 'SpecifiedLineTradeDelivery/BilledQuantity')),
      unit_price: perUnit(amount, base),
      unit: attr(l, 'SpecifiedLineTradeDelivery/BilledQuantity', 'unitCode'),
      tax_category: text(lineSettlement, 'ApplicableTradeTax/CategoryCode'),
      tax_rate: num(text(lineSettlement, 'ApplicableTradeTax/RateApplicablePercent')),
      allowances: adj.filter((a) => !isCharge(a)).map((a) => adjustment(a, false)),
      charges: adj.filter(isCharge).map((a) => adjustment(a, false)),
    }
  })
  const docAdjustments = all(settlement, 'SpecifiedTradeAllowanceCharge')
  const taxes = all(settlement, 'ApplicableTradeTax')
  const typeCode = text(header, 'TypeCode')
  const sellerParty = all(agreement, 'SellerTradeParty')[0]
  const request = compact({
    document_type: typeCode === '381' ? 'credit_note' : 'invoice',
    invoice_number: text(header, 'ID'),
    date: date(header, 'IssueDateTime'),
    due_date: date(settlement, 'SpecifiedTradePaymentTerms/DueDateDateTime'),
    currency: text(settlement, 'InvoiceCurrencyCode'),
    notes: all(header, 'IncludedNote').map((n) => text(n, 'Content')).filter(Boolean).join('\n') || undefined,
    buyer_reference: text(agreement, 'BuyerReference'),
    order_reference: text(agreement, 'BuyerOrderReferencedDocument/IssuerAssignedID'),
    preceding_invoice_number: text(settlement, 'InvoiceReferencedDocument/IssuerAssignedID'),
    delivery_date: date(trade, 'ApplicableHeaderTradeDelivery/ActualDeliverySupplyChainEvent/OccurrenceDateTime'),
    locale: sellerParty ? legalOf(sellerParty).locale : undefined,
    from: party(sellerParty, true),
    to: party(all(agreement, 'BuyerTradeParty')[0], false),
    tax_exemption_reason: taxes.map((t) => text(t, 'ExemptionReason')).find(Boolean),
    payment: {
      iban: text(means, 'PayeePartyCreditorFinancialAccount/IBANID'),
      bic: text(means, 'PayeeSpecifiedCreditorFinancialInstitution/BICID'),
      account_name: text(means, 'PayeePartyCreditorFinancialAccount/AccountName'),
      reference: text(settlement, 'PaymentReference'),
      terms: text(settlement, 'SpecifiedTradePaymentTerms/Description'),
    },
    items,
    allowances: docAdjustments.filter((a) => !isCharge(a)).map((a) => adjustment(a, true)),
    charges: docAdjustments.filter(isCharge).map((a) => adjustment(a, true)),
  })
  const sums = all(settlement, 'SpecifiedTradeSettlementHeaderMonetarySummation')[0]
  const groups = new Map<string, { taxable?: string; tax?: string }>()
  for (const t of taxes) groups.set(`${text(t, 'CategoryCode')}|${Number(text(t, 'RateApplicablePercent') ?? 0)}`, { taxable: text(t, 'BasisAmount'), tax: text(t, 'CalculatedAmount') })
  const taxTotal = all(sums, 'TaxTotalAmount').find((t) => attr({ x: t }, 'x', 'currencyID') === request.currency) ?? all(sums, 'TaxTotalAmount')[0]
  return {
    syntax: 'cii',
    request,
    stated: {
      BT106: text(sums, 'LineTotalAmount'),
      BT107: text(sums, 'AllowanceTotalAmount'),
      BT108: text(sums, 'ChargeTotalAmount'),
      BT109: text(sums, 'TaxBasisTotalAmount'),
      BT110: taxTotal === undefined ? undefined : String(typeof taxTotal === 'object' ? taxTotal['#text'] : taxTotal),
      BT112: text(sums, 'GrandTotalAmount'),
      BT113: text(sums, 'TotalPrepaidAmount'),
      BT114: text(sums, 'RoundingAmount'),
      BT115: text(sums, 'DuePayableAmount'),
      groups,
    },
  }
}
