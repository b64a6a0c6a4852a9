// Generated EN 16931 invoices for the property test of the read's calculation findings
// (test/invoice-receive-corpus-property.test.ts): lines with any VAT category (S at several rates,
// Z, E, AE, K, G — or O alone), negative quantities (returns), document allowances and charges,
// a paid amount, a rounding amount, exemption by reason text, code or both; every amount computed
// as EN 16931 wants it, then up to two of them changed ("perturbed") so that some rules break.
// Written as UBL 2.1 or CII D16B by plain templates here — not by the service's writer, which the
// read must not be measured against.
import fc from 'fast-check'
import { percentOf, text } from './en16931-amounts.ts'
import type { Syntax } from './en16931-rules.ts'

type Category = 'S' | 'Z' | 'E' | 'AE' | 'K' | 'G' | 'O'

interface Line {
  quantity: bigint // hundredths
  price: bigint // cents
  net: bigint // cents
  category: Category
  rate: string
}

interface Adjustment {
  charge: boolean
  amount: bigint
  category: Category
  rate: string
}

interface Breakdown {
  category: Category
  rate: string
  taxable: bigint
  tax: bigint
}

type Target =
  | { kind: 'total'; bt: 'BT-106' | 'BT-107' | 'BT-108' | 'BT-109' | 'BT-110' | 'BT-112' | 'BT-113' | 'BT-114' | 'BT-115' }
  | { kind: 'line'; index: number }
  | { kind: 'taxable' | 'tax'; index: number }
  | { kind: 'adjustment'; index: number }

export interface Generated {
  syntax: Syntax
  lines: Line[]
  adjustments: Adjustment[]
  breakdown: Breakdown[]
  totals: Record<string, bigint>
  exemption: 'text' | 'code' | 'both'
  /** O documents in CII may leave BT-110 out (the official rules read it as 0). */
  omitVatTotal: boolean
  perturbed: string[]
}

const EXEMPTION: Record<Category, { code: string; text: string } | undefined> = {
  S: undefined,
  Z: undefined,
  E: { code: 'VATEX-EU-132', text: 'Exempt under Article 132 of the VAT directive' },
  AE: { code: 'VATEX-EU-AE', text: 'Reverse charge' },
  K: { code: 'VATEX-EU-IC', text: 'Intra-Community supply' },
  G: { code: 'VATEX-EU-G', text: 'Export outside the EU' },
  O: { code: 'VATEX-EU-O', text: 'Not subject to VAT' },
}

const key = (c: Category, rate: string) => `${c}|${rate}`

/** Totals, breakdown and all, computed from the lines and adjustments as the rules require. */
function complete(syntax: Syntax, lines: Line[], adjustments: Adjustment[], prepaid: bigint | null, rounding: bigint | null, exemption: Generated['exemption'], omitVatTotal: boolean): Generated {
  const groups = new Map<string, Breakdown>()
  const group = (c: Category, rate: string) => {
    const k = key(c, rate)
    if (!groups.has(k)) groups.set(k, { category: c, rate, taxable: 0n, tax: 0n })
    return groups.get(k)!
  }
  for (const l of lines) group(l.category, l.rate).taxable += l.net
  for (const a of adjustments) group(a.category, a.rate).taxable += a.charge ? a.amount : -a.amount
  const breakdown = [...groups.values()]
  for (const b of breakdown) b.tax = b.category === 'S' ? percentOf(b.taxable, b.rate) : 0n
  const t: Record<string, bigint> = {}
  t['BT-106'] = lines.reduce((a, l) => a + l.net, 0n)
  const allowances = adjustments.filter((a) => !a.charge)
  const charges = adjustments.filter((a) => a.charge)
  if (allowances.length) t['BT-107'] = allowances.reduce((a, x) => a + x.amount, 0n)
  if (charges.length) t['BT-108'] = charges.reduce((a, x) => a + x.amount, 0n)
  t['BT-109'] = t['BT-106'] - (t['BT-107'] ?? 0n) + (t['BT-108'] ?? 0n)
  t['BT-110'] = breakdown.reduce((a, b) => a + b.tax, 0n)
  t['BT-112'] = t['BT-109'] + t['BT-110']
  if (prepaid !== null) t['BT-113'] = prepaid
  if (rounding !== null) t['BT-114'] = rounding
  t['BT-115'] = t['BT-112'] - (prepaid ?? 0n) + (rounding ?? 0n)
  return { syntax, lines, adjustments, breakdown, totals: t, exemption, omitVatTotal: omitVatTotal && syntax === 'cii' && breakdown.every((b) => b.category === 'O'), perturbed: [] }
}

function perturb(doc: Generated, changes: { target: Target; delta: bigint }[]): Generated {
  for (const { target, delta } of changes) {
    if (target.kind === 'total') {
      if (doc.totals[target.bt] === undefined || (target.bt === 'BT-110' && doc.omitVatTotal)) continue
      doc.totals[target.bt] = doc.totals[target.bt]! + delta
      doc.perturbed.push(`${target.bt} ${text(delta)}`)
    } else if (target.kind === 'line') {
      const l = doc.lines[target.index % doc.lines.length]!
      l.net += delta
      doc.perturbed.push(`line ${doc.lines.indexOf(l) + 1} BT-131 ${text(delta)}`)
    } else if (target.kind === 'adjustment') {
      if (!doc.adjustments.length) continue
      const a = doc.adjustments[target.index % doc.adjustments.length]!
      if (a.amount + delta < 0n) continue // allowances and charges are not negative (BR-DEC aside, keep them valid)
      a.amount += delta
      doc.perturbed.push(`${a.charge ? 'charge' : 'allowance'} ${doc.adjustments.indexOf(a) + 1} ${text(delta)}`)
    } else {
      const b = doc.breakdown[target.index % doc.breakdown.length]!
      b[target.kind] += delta
      doc.perturbed.push(`${b.category} ${b.rate} ${target.kind === 'tax' ? 'BT-117' : 'BT-116'} ${text(delta)}`)
    }
  }
  return doc
}

const S_RATES = ['19', '7', '25', '5.5', '20']
// Where a rule allows a difference below 1.00 (BR-S-08 in UBL, BR-Z/E/AE/IC/G-08 in CII) the
// official XSLT compares `amount - 1` as xs:double, so a difference of exactly 1.00 falls either
// way by binary rounding. These deltas, alone or two together, never differ by exactly 1.00; the
// tax amount (BT-117, whose rules compare decimals) also gets ±1.00, the edge of BR-CO-17.
const DELTAS = [1n, -1n, 49n, 98n, -103n, 237n, 1000n, -1000n]
const TAX_DELTAS = [...DELTAS, 100n, -100n]

const lineArb = (categories: Category[]) =>
  fc.record({
    quantity: fc.oneof(fc.integer({ min: 1, max: 2000 }), fc.integer({ min: -500, max: -1 })).map((q) => BigInt(q) * (q % 3 === 0 ? 1n : 100n)),
    price: fc.integer({ min: 0, max: 250_000 }).map(BigInt),
    category: fc.constantFrom(...categories),
    rate: fc.constantFrom(...S_RATES),
    /** EN 16931 does not tie BT-131 to quantity × price: sometimes a line states another net. */
    deviation: fc.oneof({ weight: 4, arbitrary: fc.constant(0n) }, { weight: 1, arbitrary: fc.integer({ min: -99, max: 99 }).map(BigInt) }),
  })

const targetArb: fc.Arbitrary<Target> = fc.oneof(
  fc.record({ kind: fc.constant('total' as const), bt: fc.constantFrom('BT-106', 'BT-107', 'BT-108', 'BT-109', 'BT-110', 'BT-112', 'BT-113', 'BT-114', 'BT-115') }),
  fc.record({ kind: fc.constant('line' as const), index: fc.nat(9) }),
  fc.record({ kind: fc.constantFrom('taxable' as const, 'tax' as const), index: fc.nat(9) }),
  fc.record({ kind: fc.constant('adjustment' as const), index: fc.nat(9) }),
)

/** A generated document of the syntax: valid, or with up to two amounts changed. */
export const documentArb = (syntax: Syntax): fc.Arbitrary<Generated> =>
  fc.constantFrom<'O' | 'mixed'>('mixed', 'mixed', 'mixed', 'O').chain((regime) => {
    const categories: Category[] = regime === 'O' ? ['O'] : ['S', 'S', 'S', 'Z', 'E', 'AE', 'K', 'G']
    const rateOf = (c: Category, r: string) => (c === 'S' ? r : c === 'O' ? '' : '0')
    return fc
      .record({
        lines: fc.array(lineArb(categories), { minLength: 1, maxLength: 5 }),
        adjustments: fc.array(fc.record({ charge: fc.boolean(), amount: fc.integer({ min: 0, max: 20_000 }).map(BigInt), pick: fc.nat(9) }), { maxLength: 2 }),
        prepaid: fc.option(fc.integer({ min: 0, max: 50_000 }).map(BigInt), { freq: 3 }),
        rounding: fc.option(fc.integer({ min: -49, max: 49 }).map(BigInt), { freq: 4 }),
        exemption: fc.constantFrom('text' as const, 'code' as const, 'both' as const),
        omitVatTotal: fc.boolean(),
        changes: fc.array(
          targetArb.chain((target) => fc.record({ target: fc.constant(target), delta: fc.constantFrom(...(target.kind === 'tax' ? TAX_DELTAS : DELTAS)) })),
          { maxLength: 2 },
        ),
      })
      .map((g) => {
        const lines: Line[] = g.lines.map((l) => {
          const rate = rateOf(l.category, l.rate)
          // quantity in hundredths × price in cents → cents, rounded half away from zero
          const exact = l.quantity * l.price
          const net = (exact >= 0n ? exact + 50n : exact - 50n) / 100n + l.deviation
          return { quantity: l.quantity, price: l.price, net, category: l.category, rate }
        })
        // An allowance or charge is in a category (and rate) some line has.
        const adjustments: Adjustment[] = g.adjustments.map((a) => {
          const l = lines[a.pick % lines.length]!
          return { charge: a.charge, amount: a.amount, category: l.category, rate: l.rate }
        })
        return perturb(complete(syntax, lines, adjustments, g.prepaid, g.rounding, g.exemption, g.omitVatTotal), g.changes)
      })
  })

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;')
const qty = (q: bigint) => text(q) // hundredths as a decimal

/** The exemption reason elements of a breakdown, as the document's style has them. */
function exemptionOf(c: Category, style: Generated['exemption']): { code?: string; text?: string } {
  const e = EXEMPTION[c]
  if (!e) return {}
  return { code: style !== 'text' ? e.code : undefined, text: style !== 'code' ? e.text : undefined }
}

export function toXml(doc: Generated, n: number): string {
  return doc.syntax === 'ubl' ? ubl(doc, n) : cii(doc, n)
}

function ubl(doc: Generated, n: number): string {
  const O = doc.breakdown.every((b) => b.category === 'O')
  const cur = 'currencyID="EUR"'
  const party = (name: string, country: string, vat: string) => `<cac:Party>
      <cac:PartyIdentification><cbc:ID>${name.toUpperCase()}-1</cbc:ID></cac:PartyIdentification>
      <cac:PostalAddress><cbc:StreetName>Main street 1</cbc:StreetName><cbc:CityName>City</cbc:CityName><cbc:PostalZone>10115</cbc:PostalZone><cac:Country><cbc:IdentificationCode>${country}</cbc:IdentificationCode></cac:Country></cac:PostalAddress>
      ${O ? '' : `<cac:PartyTaxScheme><cbc:CompanyID>${vat}</cbc:CompanyID><cac:TaxScheme><cbc:ID>VAT</cbc:ID></cac:TaxScheme></cac:PartyTaxScheme>`}
      <cac:PartyLegalEntity><cbc:RegistrationName>${name}</cbc:RegistrationName></cac:PartyLegalEntity>
    </cac:Party>`
  const category = (c: Category, rate: string, ex = false) => {
    const e = ex ? exemptionOf(c, doc.exemption) : {}
    return `<cbc:ID>${c}</cbc:ID>${rate !== '' ? `<cbc:Percent>${rate}</cbc:Percent>` : ''}${e.code ? `<cbc:TaxExemptionReasonCode>${e.code}</cbc:TaxExemptionReasonCode>` : ''}${e.text ? `<cbc:TaxExemptionReason>${esc(e.text)}</cbc:TaxExemptionReason>` : ''}<cac:TaxScheme><cbc:ID>VAT</cbc:ID></cac:TaxScheme>`
  }
  const t = doc.totals
  const amount = (el: string, bt: string) => (t[bt] === undefined ? '' : `<cbc:${el} ${cur}>${text(t[bt]!)}</cbc:${el}>`)
  return `<?xml version="1.0" encoding="UTF-8"?>
<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2" xmlns:cac="urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2" xmlns:cbc="urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2">
  <cbc:CustomizationID>urn:cen.eu:en16931:2017</cbc:CustomizationID>
  <cbc:ID>GEN-${n}</cbc:ID>
  <cbc:IssueDate>2026-11-02</cbc:IssueDate>
  <cbc:DueDate>2026-12-02</cbc:DueDate>
  <cbc:InvoiceTypeCode>380</cbc:InvoiceTypeCode>
  <cbc:DocumentCurrencyCode>EUR</cbc:DocumentCurrencyCode>
  <cac:AccountingSupplierParty>${party('Seller', 'DE', 'DE123456789')}</cac:AccountingSupplierParty>
  <cac:AccountingCustomerParty>${party('Buyer', 'FR', 'FR12345678901')}</cac:AccountingCustomerParty>
  ${O ? '' : '<cac:Delivery><cbc:ActualDeliveryDate>2026-10-30</cbc:ActualDeliveryDate><cac:DeliveryLocation><cac:Address><cac:Country><cbc:IdentificationCode>FR</cbc:IdentificationCode></cac:Country></cac:Address></cac:DeliveryLocation></cac:Delivery>'}
  ${doc.adjustments
    .map(
      (a) => `<cac:AllowanceCharge><cbc:ChargeIndicator>${a.charge}</cbc:ChargeIndicator><cbc:AllowanceChargeReason>${a.charge ? 'Freight' : 'Discount'}</cbc:AllowanceChargeReason><cbc:Amount ${cur}>${text(a.amount)}</cbc:Amount><cac:TaxCategory>${category(a.category, a.rate)}</cac:TaxCategory></cac:AllowanceCharge>`,
    )
    .join('\n  ')}
  <cac:TaxTotal>
    <cbc:TaxAmount ${cur}>${text(t['BT-110']!)}</cbc:TaxAmount>
    ${doc.breakdown
      .map((b) => `<cac:TaxSubtotal><cbc:TaxableAmount ${cur}>${text(b.taxable)}</cbc:TaxableAmount><cbc:TaxAmount ${cur}>${text(b.tax)}</cbc:TaxAmount><cac:TaxCategory>${category(b.category, b.rate, true)}</cac:TaxCategory></cac:TaxSubtotal>`)
      .join('\n    ')}
  </cac:TaxTotal>
  <cac:LegalMonetaryTotal>${amount('LineExtensionAmount', 'BT-106')}${amount('TaxExclusiveAmount', 'BT-109')}${amount('TaxInclusiveAmount', 'BT-112')}${amount('AllowanceTotalAmount', 'BT-107')}${amount('ChargeTotalAmount', 'BT-108')}${amount('PrepaidAmount', 'BT-113')}${amount('PayableRoundingAmount', 'BT-114')}${amount('PayableAmount', 'BT-115')}</cac:LegalMonetaryTotal>
  ${doc.lines
    .map(
      (l, i) => `<cac:InvoiceLine><cbc:ID>${i + 1}</cbc:ID><cbc:InvoicedQuantity unitCode="C62">${qty(l.quantity)}</cbc:InvoicedQuantity><cbc:LineExtensionAmount ${cur}>${text(l.net)}</cbc:LineExtensionAmount><cac:Item><cbc:Name>Item ${i + 1}</cbc:Name><cac:ClassifiedTaxCategory>${category(l.category, l.rate)}</cac:ClassifiedTaxCategory></cac:Item><cac:Price><cbc:PriceAmount ${cur}>${text(l.price)}</cbc:PriceAmount></cac:Price></cac:InvoiceLine>`,
    )
    .join('\n  ')}
</Invoice>
`
}

function cii(doc: Generated, n: number): string {
  const O = doc.breakdown.every((b) => b.category === 'O')
  const t = doc.totals
  const party = (el: string, name: string, country: string, vat: string) => `<ram:${el}><ram:ID>${name.toUpperCase()}-1</ram:ID><ram:Name>${name}</ram:Name><ram:PostalTradeAddress><ram:PostcodeCode>10115</ram:PostcodeCode><ram:LineOne>Main street 1</ram:LineOne><ram:CityName>City</ram:CityName><ram:CountryID>${country}</ram:CountryID></ram:PostalTradeAddress>${O ? '' : `<ram:SpecifiedTaxRegistration><ram:ID schemeID="VA">${vat}</ram:ID></ram:SpecifiedTaxRegistration>`}</ram:${el}>`
  const rate = (r: string) => (r !== '' ? `<ram:RateApplicablePercent>${r}</ram:RateApplicablePercent>` : '')
  const amount = (el: string, bt: string, attr = '') => (t[bt] === undefined ? '' : `<ram:${el}${attr}>${text(t[bt]!)}</ram:${el}>`)
  return `<?xml version="1.0" encoding="UTF-8"?>
<rsm:CrossIndustryInvoice xmlns:rsm="urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100" xmlns:ram="urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:100" xmlns:udt="urn:un:unece:uncefact:data:standard:UnqualifiedDataType:100">
  <rsm:ExchangedDocumentContext><ram:GuidelineSpecifiedDocumentContextParameter><ram:ID>urn:cen.eu:en16931:2017</ram:ID></ram:GuidelineSpecifiedDocumentContextParameter></rsm:ExchangedDocumentContext>
  <rsm:ExchangedDocument><ram:ID>GEN-${n}</ram:ID><ram:TypeCode>380</ram:TypeCode><ram:IssueDateTime><udt:DateTimeString format="102">20261102</udt:DateTimeString></ram:IssueDateTime></rsm:ExchangedDocument>
  <rsm:SupplyChainTradeTransaction>
    ${doc.lines
      .map(
        (l, i) => `<ram:IncludedSupplyChainTradeLineItem><ram:AssociatedDocumentLineDocument><ram:LineID>${i + 1}</ram:LineID></ram:AssociatedDocumentLineDocument><ram:SpecifiedTradeProduct><ram:Name>Item ${i + 1}</ram:Name></ram:SpecifiedTradeProduct><ram:SpecifiedLineTradeAgreement><ram:NetPriceProductTradePrice><ram:ChargeAmount>${text(l.price)}</ram:ChargeAmount></ram:NetPriceProductTradePrice></ram:SpecifiedLineTradeAgreement><ram:SpecifiedLineTradeDelivery><ram:BilledQuantity unitCode="C62">${qty(l.quantity)}</ram:BilledQuantity></ram:SpecifiedLineTradeDelivery><ram:SpecifiedLineTradeSettlement><ram:ApplicableTradeTax><ram:TypeCode>VAT</ram:TypeCode><ram:CategoryCode>${l.category}</ram:CategoryCode>${rate(l.rate)}</ram:ApplicableTradeTax><ram:SpecifiedTradeSettlementLineMonetarySummation><ram:LineTotalAmount>${text(l.net)}</ram:LineTotalAmount></ram:SpecifiedTradeSettlementLineMonetarySummation></ram:SpecifiedLineTradeSettlement></ram:IncludedSupplyChainTradeLineItem>`,
      )
      .join('\n    ')}
    <ram:ApplicableHeaderTradeAgreement>${party('SellerTradeParty', 'Seller', 'DE', 'DE123456789')}${party('BuyerTradeParty', 'Buyer', 'FR', 'FR12345678901')}</ram:ApplicableHeaderTradeAgreement>
    <ram:ApplicableHeaderTradeDelivery>${O ? '' : '<ram:ShipToTradeParty><ram:PostalTradeAddress><ram:CountryID>FR</ram:CountryID></ram:PostalTradeAddress></ram:ShipToTradeParty><ram:ActualDeliverySupplyChainEvent><ram:OccurrenceDateTime><udt:DateTimeString format="102">20261030</udt:DateTimeString></ram:OccurrenceDateTime></ram:ActualDeliverySupplyChainEvent>'}</ram:ApplicableHeaderTradeDelivery>
    <ram:ApplicableHeaderTradeSettlement>
      <ram:InvoiceCurrencyCode>EUR</ram:InvoiceCurrencyCode>
      ${doc.breakdown
        .map((b) => {
          const e = exemptionOf(b.category, doc.exemption)
          return `<ram:ApplicableTradeTax><ram:CalculatedAmount>${text(b.tax)}</ram:CalculatedAmount><ram:TypeCode>VAT</ram:TypeCode>${e.text ? `<ram:ExemptionReason>${esc(e.text)}</ram:ExemptionReason>` : ''}<ram:BasisAmount>${text(b.taxable)}</ram:BasisAmount><ram:CategoryCode>${b.category}</ram:CategoryCode>${e.code ? `<ram:ExemptionReasonCode>${e.code}</ram:ExemptionReasonCode>` : ''}${rate(b.rate)}</ram:ApplicableTradeTax>`
        })
        .join('\n      ')}
      ${doc.adjustments
        .map(
          (a) => `<ram:SpecifiedTradeAllowanceCharge><ram:ChargeIndicator><udt:Indicator>${a.charge}</udt:Indicator></ram:ChargeIndicator><ram:ActualAmount>${text(a.amount)}</ram:ActualAmount><ram:Reason>${a.charge ? 'Freight' : 'Discount'}</ram:Reason><ram:CategoryTradeTax><ram:TypeCode>VAT</ram:TypeCode><ram:CategoryCode>${a.category}</ram:CategoryCode>${rate(a.rate)}</ram:CategoryTradeTax></ram:SpecifiedTradeAllowanceCharge>`,
        )
        .join('\n      ')}
      <ram:SpecifiedTradePaymentTerms><ram:DueDateDateTime><udt:DateTimeString format="102">20261202</udt:DateTimeString></ram:DueDateDateTime></ram:SpecifiedTradePaymentTerms>
      <ram:SpecifiedTradeSettlementHeaderMonetarySummation>${amount('LineTotalAmount', 'BT-106')}${amount('ChargeTotalAmount', 'BT-108')}${amount('AllowanceTotalAmount', 'BT-107')}${amount('TaxBasisTotalAmount', 'BT-109')}${doc.omitVatTotal ? '' : amount('TaxTotalAmount', 'BT-110', ' currencyID="EUR"')}${amount('RoundingAmount', 'BT-114')}${amount('GrandTotalAmount', 'BT-112')}${amount('TotalPrepaidAmount', 'BT-113')}${amount('DuePayableAmount', 'BT-115')}</ram:SpecifiedTradeSettlementHeaderMonetarySummation>
    </ram:ApplicableHeaderTradeSettlement>
  </rsm:SupplyChainTradeTransaction>
</rsm:CrossIndustryInvoice>
`
}
