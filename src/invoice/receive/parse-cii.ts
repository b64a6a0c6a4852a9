// A received UN/CEFACT CII D16B invoice (XRechnung CII, the XML inside Factur-X/ZUGFeRD) read into
// this service's invoice request, what it states exactly as written, and the facts its rules ask about.
import { all, attr, rawText, text, valueText } from './safe-xml.ts'
import { compact, defined, num, perUnit, type ReceivedInvoice } from './received.ts'
import type { StatedAdjustment } from './read-result.ts'
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

function statedAdjustment(a: unknown, withCategory: boolean): StatedAdjustment {
  return defined({
    amount: text(a, 'ActualAmount'),
    base_amount: text(a, 'BasisAmount'),
    percentage: text(a, 'CalculationPercent'),
    reason: text(a, 'Reason'),
    reason_code: text(a, 'ReasonCode'),
    vat_category: withCategory ? text(a, 'CategoryTradeTax/CategoryCode') : undefined,
    vat_rate: withCategory ? text(a, 'CategoryTradeTax/RateApplicablePercent') : undefined,
  })
}

const endpoint = (p: unknown) => {
  const id = text(p, 'URIUniversalCommunication/URIID')
  return id === undefined ? undefined : { id, scheme: attr(p, 'URIUniversalCommunication/URIID', 'schemeID') }
}

const taxId = (p: unknown, scheme: string) => all(p, 'SpecifiedTaxRegistration').filter((r) => attr(r, 'ID', 'schemeID') === scheme).map((r) => text(r, 'ID')).find(Boolean)

export function parseCii(doc: Json): ReceivedInvoice {
  const header = all(doc, 'ExchangedDocument')[0]
  const trade = all(doc, 'SupplyChainTradeTransaction')[0]
  const agreement = all(trade, 'ApplicableHeaderTradeAgreement')[0]
  const settlement = all(trade, 'ApplicableHeaderTradeSettlement')[0]
  const allMeans = all(settlement, 'SpecifiedTradeSettlementPaymentMeans')
  const means = allMeans.find((m) => text(m, 'PayeePartyCreditorFinancialAccount/IBANID')) ?? allMeans[0]
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
      terms: rawText(settlement, 'SpecifiedTradePaymentTerms/Description')?.replace(/^\s+/, ''),
    },
    items,
    allowances: docAdjustments.filter((a) => !isCharge(a)).map((a) => adjustment(a, true)),
    charges: docAdjustments.filter(isCharge).map((a) => adjustment(a, true)),
  })
  const sums = all(settlement, 'SpecifiedTradeSettlementHeaderMonetarySummation')[0]
  const currency = text(settlement, 'InvoiceCurrencyCode')
  const taxCurrency = text(settlement, 'TaxCurrencyCode')
  const taxTotals = all(sums, 'TaxTotalAmount')
  const amountIn = (c: string | undefined) => {
    const t = taxTotals.find((x) => attr({ x }, 'x', 'currencyID') === c)
    return t === undefined ? undefined : valueText(t)
  }
  // BT-110 is the total in the invoice currency; with one TaxTotalAmount and no currencyID, that one.
  const bt110 = amountIn(currency) ?? (taxTotals.length === 1 && !attr({ x: taxTotals[0] }, 'x', 'currencyID') ? valueText(taxTotals[0]) : undefined)
  const buyerParty = all(agreement, 'BuyerTradeParty')[0]
  const taxRep = all(agreement, 'SellerTaxRepresentativeTradeParty')[0]
  const terms = all(settlement, 'SpecifiedTradePaymentTerms')
  const delivery = all(trade, 'ApplicableHeaderTradeDelivery')[0]
  return {
    syntax: 'cii',
    request,
    profileId: text(doc, 'ExchangedDocumentContext/GuidelineSpecifiedDocumentContextParameter/ID'),
    processId: text(doc, 'ExchangedDocumentContext/BusinessProcessSpecifiedDocumentContextParameter/ID'),
    stated: {
      currency,
      tax_currency: taxCurrency,
      lines: all(trade, 'IncludedSupplyChainTradeLineItem').map((l) => {
        const lineSettlement = all(l, 'SpecifiedLineTradeSettlement')[0]
        const adj = all(lineSettlement, 'SpecifiedTradeAllowanceCharge')
        return defined({
          id: text(l, 'AssociatedDocumentLineDocument/LineID'),
          name: text(l, 'SpecifiedTradeProduct/Name'),
          quantity: text(l, 'SpecifiedLineTradeDelivery/BilledQuantity'),
          unit: attr(l, 'SpecifiedLineTradeDelivery/BilledQuantity', 'unitCode'),
          unit_price: text(l, 'SpecifiedLineTradeAgreement/NetPriceProductTradePrice/ChargeAmount'),
          gross_price: text(l, 'SpecifiedLineTradeAgreement/GrossPriceProductTradePrice/ChargeAmount'),
          price_base_quantity: text(l, 'SpecifiedLineTradeAgreement/NetPriceProductTradePrice/BasisQuantity'),
          net_amount: text(lineSettlement, 'SpecifiedTradeSettlementLineMonetarySummation/LineTotalAmount'),
          vat_category: text(lineSettlement, 'ApplicableTradeTax/CategoryCode'),
          vat_rate: text(lineSettlement, 'ApplicableTradeTax/RateApplicablePercent'),
          allowances: adj.filter((a) => !isCharge(a)).map((a) => statedAdjustment(a, false)),
          charges: adj.filter(isCharge).map((a) => statedAdjustment(a, false)),
        })
      }),
      allowances: docAdjustments.filter((a) => !isCharge(a)).map((a) => statedAdjustment(a, true)),
      charges: docAdjustments.filter(isCharge).map((a) => statedAdjustment(a, true)),
      totals: defined({
        BT106: text(sums, 'LineTotalAmount'),
        BT107: text(sums, 'AllowanceTotalAmount'),
        BT108: text(sums, 'ChargeTotalAmount'),
        BT109: text(sums, 'TaxBasisTotalAmount'),
        BT110: bt110,
        BT111: taxCurrency ? amountIn(taxCurrency) : undefined,
        BT112: text(sums, 'GrandTotalAmount'),
        BT113: text(sums, 'TotalPrepaidAmount'),
        BT114: text(sums, 'RoundingAmount'),
        BT115: text(sums, 'DuePayableAmount'),
      }),
      vat_breakdown: taxes.map((t) =>
        defined({
          category: text(t, 'CategoryCode'),
          rate: text(t, 'RateApplicablePercent'),
          taxable: text(t, 'BasisAmount'),
          tax: text(t, 'CalculatedAmount'),
          exemption_reason: text(t, 'ExemptionReason'),
          exemption_code: text(t, 'ExemptionReasonCode'),
        }),
      ),
      payment_means: allMeans.map((m) =>
        defined({
          code: text(m, 'TypeCode'),
          text: text(m, 'Information'),
          reference: text(settlement, 'PaymentReference'),
          account: text(m, 'PayeePartyCreditorFinancialAccount/IBANID') ?? text(m, 'PayeePartyCreditorFinancialAccount/ProprietaryID'),
          account_name: text(m, 'PayeePartyCreditorFinancialAccount/AccountName'),
          bic: text(m, 'PayeeSpecifiedCreditorFinancialInstitution/BICID'),
          card: text(m, 'ApplicableTradeSettlementFinancialCard/ID'),
          card_holder: text(m, 'ApplicableTradeSettlementFinancialCard/CardholderName'),
          mandate: terms.map((t) => text(t, 'DirectDebitMandateID')).find(Boolean),
          creditor_id: all(m, 'PayerPartyDebtorFinancialAccount').length ? text(settlement, 'CreditorReferenceID') : undefined,
          debited_account: text(m, 'PayerPartyDebtorFinancialAccount/IBANID'),
        }),
      ),
      payment_terms: terms.map((t) => rawText(t, 'Description')).filter((t): t is string => !!t).join('\n').replace(/^\s+/, '') || undefined,
    },
    facts: {
      typeCode,
      sellerIds: all(sellerParty, 'ID').concat(all(sellerParty, 'GlobalID')).map(valueText).filter((v): v is string => !!v),
      sellerLegalId: text(sellerParty, 'SpecifiedLegalOrganization/ID'),
      sellerLegalScheme: attr(sellerParty, 'SpecifiedLegalOrganization/ID', 'schemeID'),
      sellerVatId: taxId(sellerParty, 'VA'),
      sellerTaxId: taxId(sellerParty, 'FC'),
      taxRep: taxRep !== undefined,
      taxRepVatId: taxId(taxRep, 'VA'),
      buyerLegalId: text(buyerParty, 'SpecifiedLegalOrganization/ID'),
      buyerVatId: taxId(buyerParty, 'VA'),
      sellerEndpoint: endpoint(sellerParty),
      buyerEndpoint: endpoint(buyerParty),
      countries: [sellerParty, buyerParty, taxRep, all(delivery, 'ShipToTradeParty')[0]].map((p) => text(p, 'PostalTradeAddress/CountryID')).filter((c): c is string => !!c),
      deliveryCountry: text(delivery, 'ShipToTradeParty/PostalTradeAddress/CountryID'),
      deliveryDate: text(delivery, 'ActualDeliverySupplyChainEvent/OccurrenceDateTime/DateTimeString'),
      invoicingPeriod: all(settlement, 'BillingSpecifiedPeriod').length > 0,
      dueDate: terms.map((t) => text(t, 'DueDateDateTime/DateTimeString')).find(Boolean),
    },
  }
}
