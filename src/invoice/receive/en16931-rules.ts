// The EN 16931 core rules evaluated on what a received e-invoice states (docs/einvoice.md,
// "Receiving e-invoices"): the document's own amounts, never this service's recomputation. Rule
// ids, wording and arithmetic follow the official CEN schematron (ConnectingEurope/
// eInvoicing-EN16931, validation 1.3.x): sums rounded as XPath round() does, and each tolerance
// where that syntax's rule file has one — the UBL and CII rule files differ, and a document is
// judged by its own syntax's (see SYNTAX_ARITHMETIC). Every rule there is flagged fatal except
// BR-51 (warning): fatal → error. Calculation rules run always, whatever else failed.
import { abs, dec, decimals, percentOf, round2, show, sum, ONE_UNIT, type Dec } from './decimal.ts'
import type { Finding, Stated, StatedAdjustment, StatedLine } from './read-result.ts'
import type { Facts } from './received.ts'

/** ISO 4217 alpha-3 as the official BR-CL-04 lists it. */
const CURRENCIES = new Set('AED AFN ALL AMD AOA ARS AUD AWG AZN BAM BBD BDT BHD BIF BMD BND BOB BOV BRL BSD BTN BWP BYN BZD CAD CDF CHE CHF CHW CLF CLP CNH CNY COP COU CRC CUP CVE CZK DJF DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP GEL GHS GIP GMD GNF GTQ GYD HKD HNL HTG HUF IDR ILS INR IQD IRR ISK JMD JOD JPY KES KGS KHR KMF KPW KRW KWD KYD KZT LAK LBP LKR LRD LSL LYD MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR MWK MXN MXV MYR MZN NAD NGN NIO NOK NPR NZD OMR PAB PEN PGK PHP PKR PLN PYG QAR RON RSD RUB RWF SAR SBD SCR SDG SEK SGD SHP SLE SOS SRD SSP STD SVC SYP SZL THB TJS TMT TND TOP TRY TTD TWD TZS UAH UGX USD USN UYI UYU UYW UZS VES VED VND VUV WST XAF XAG XAU XBA XBB XBC XBD XCD XCG XDR XOF XPD XPF XPT XSU XTS XUA XXX YER ZAR ZMW ZWG'.split(' '))

/** BR-CO-09: the ISO 3166-1 prefixes (and EL, XI, 1A) a VAT identifier may start with. */
const VAT_PREFIX = /^(1A|AD|AE|AF|AG|AI|AL|AM|AO|AQ|AR|AS|AT|AU|AW|AX|AZ|BA|BB|BD|BE|BF|BG|BH|BI|BJ|BL|BM|BN|BO|BQ|BR|BS|BT|BV|BW|BY|BZ|CA|CC|CD|CF|CG|CH|CI|CK|CL|CM|CN|CO|CR|CU|CV|CW|CX|CY|CZ|DE|DJ|DK|DM|DO|DZ|EC|EE|EG|EH|EL|ER|ES|ET|FI|FJ|FK|FM|FO|FR|GA|GB|GD|GE|GF|GG|GH|GI|GL|GM|GN|GP|GQ|GR|GS|GT|GU|GW|GY|HK|HM|HN|HR|HT|HU|ID|IE|IL|IM|IN|IO|IQ|IR|IS|IT|JE|JM|JO|JP|KE|KG|KH|KI|KM|KN|KP|KR|KW|KY|KZ|LA|LB|LC|LI|LK|LR|LS|LT|LU|LV|LY|MA|MC|MD|ME|MF|MG|MH|MK|ML|MM|MN|MO|MP|MQ|MR|MS|MT|MU|MV|MW|MX|MY|MZ|NA|NC|NE|NF|NG|NI|NL|NO|NP|NR|NU|NZ|OM|PA|PE|PF|PG|PH|PK|PL|PM|PN|PR|PS|PT|PW|PY|QA|RE|RO|RS|RU|RW|SA|SB|SC|SD|SE|SG|SH|SI|SJ|SK|SL|SM|SN|SO|SR|SS|ST|SV|SX|SY|SZ|TC|TD|TF|TG|TH|TJ|TK|TL|TM|TN|TO|TR|TT|TV|TW|TZ|UA|UG|UM|US|UY|UZ|VA|VC|VE|VG|VI|VN|VU|WF|WS|XI|YE|YT|ZA|ZM|ZW)/

/** The VAT categories (UNCL5305 as EN 16931 uses it) and the rule prefix of each. */
const CATEGORY: Record<string, { prefix: string; name: string }> = {
  S: { prefix: 'BR-S', name: 'Standard rated' },
  Z: { prefix: 'BR-Z', name: 'Zero rated' },
  E: { prefix: 'BR-E', name: 'Exempt from VAT' },
  AE: { prefix: 'BR-AE', name: 'Reverse charge' },
  K: { prefix: 'BR-IC', name: 'Intra-community supply' },
  G: { prefix: 'BR-G', name: 'Export outside the EU' },
  O: { prefix: 'BR-O', name: 'Not subject to VAT' },
  L: { prefix: 'BR-AF', name: 'IGIC' },
  M: { prefix: 'BR-AG', name: 'IPSI' },
}

/**
 * Where the official UBL and CII rule files compute differently (validation 1.3.16), as the corpus
 * property test compares them document by document:
 * - BR-S/AF/AG-08 (a rate of its own): UBL allows a difference under 1.00; CII is exact, with the
 *   lines, the charges and the allowances each rounded to cents first.
 * - BR-Z/E/AE/IC/G-08: UBL is exact; CII allows under 1.00 (parts rounded to cents). BR-O-08 is
 *   exact in both (CII rounding the parts).
 * - BR-CO-17: UBL allows under 1.00, CII up to 1.00 inclusive; and CII never checks it on an L, M
 *   or O breakdown (those category rules take the same element first in its pattern).
 * - BR-CO-15: CII also passes a BT-112 equal to BT-109, whatever BT-110 says; UBL does not.
 */
const SYNTAX_ARITHMETIC = {
  ubl: { roundParts: false, perRateTolerance: true, otherTolerance: false, co17Inclusive: false, co17Skips: new Set<string>(), co15AcceptsNoVat: false },
  cii: { roundParts: true, perRateTolerance: false, otherTolerance: true, co17Inclusive: true, co17Skips: new Set(['L', 'M', 'O']), co15AcceptsNoVat: true },
} as const
type Arithmetic = (typeof SYNTAX_ARITHMETIC)[keyof typeof SYNTAX_ARITHMETIC]

export interface RuleInput {
  /** The syntax the document came in: its rule file's arithmetic applies. */
  syntax: 'ubl' | 'cii'
  stated: Stated
  facts: Facts
  /** The request read from the document: names, addresses, dates as the request has them. */
  request: Record<string, any>
  profileId?: string
}

export function en16931Findings({ syntax, stated, facts, request, profileId }: RuleInput): Finding[] {
  const arithmetic = SYNTAX_ARITHMETIC[syntax]
  const out: Finding[] = []
  const add = (rule: string, message: string, extra: Omit<Finding, 'rule' | 'severity' | 'message'> = {}, severity: Finding['severity'] = 'error') =>
    out.push({ rule, severity, message: `${message} (${rule})`, ...extra })
  const t = stated.totals
  const from = request.from ?? {}
  const to = request.to ?? {}

  // Presence (BR-01…BR-16).
  const need = (rule: string, bt: string, what: string, v: unknown) => {
    if (v === undefined || v === '') add(rule, `${what} (${bt}) is missing`, { bt })
  }
  need('BR-01', 'BT-24', 'The specification identifier', profileId)
  need('BR-02', 'BT-1', 'The invoice number', request.invoice_number)
  need('BR-03', 'BT-2', 'The invoice issue date', request.date)
  need('BR-04', 'BT-3', 'The invoice type code', facts.typeCode)
  need('BR-05', 'BT-5', 'The invoice currency code', stated.currency)
  need('BR-06', 'BT-27', 'The seller name', from.name)
  need('BR-07', 'BT-44', 'The buyer name', to.name)
  need('BR-09', 'BT-40', 'The seller country code', from.country)
  need('BR-11', 'BT-55', 'The buyer country code', to.country)
  need('BR-12', 'BT-106', 'The sum of invoice line net amounts', t.BT106)
  need('BR-13', 'BT-109', 'The invoice total amount without VAT', t.BT109)
  need('BR-14', 'BT-112', 'The invoice total amount with VAT', t.BT112)
  need('BR-15', 'BT-115', 'The amount due for payment', t.BT115)

  // Code lists.
  if (stated.currency !== undefined && !CURRENCIES.has(stated.currency)) {
    add('BR-CL-04', `The invoice currency code (BT-5) "${stated.currency}" is not an ISO 4217 alpha-3 code`, { bt: 'BT-5', stated: stated.currency })
  }
  if (stated.tax_currency !== undefined && !CURRENCIES.has(stated.tax_currency)) {
    add('BR-CL-05', `The VAT accounting currency code (BT-6) "${stated.tax_currency}" is not an ISO 4217 alpha-3 code`, { bt: 'BT-6', stated: stated.tax_currency })
  }
  if (stated.tax_currency !== undefined && t.BT111 === undefined) add('BR-53', 'The VAT accounting currency code (BT-6) is given, but the total VAT amount in accounting currency (BT-111) is missing', { bt: 'BT-111' })
  for (const [bt, who, v] of [['BT-31', 'seller VAT identifier', facts.sellerVatId], ['BT-63', 'seller tax representative VAT identifier', facts.taxRepVatId], ['BT-48', 'buyer VAT identifier', facts.buyerVatId]] as const) {
    if (v !== undefined && !VAT_PREFIX.test(v)) add('BR-CO-09', `The ${who} (${bt}) "${v}" does not start with an ISO 3166-1 country prefix`, { bt, stated: v })
  }
  if (facts.sellerIds.length === 0 && facts.sellerLegalId === undefined && facts.sellerVatId === undefined) {
    add('BR-CO-26', 'The seller has no identifier (BT-29), legal registration identifier (BT-30) or VAT identifier (BT-31)', { bt: 'BT-29' })
  }

  // Lines (BR-21…BR-28, BR-CO-04) and their allowances and charges (BR-41…BR-44).
  stated.lines.forEach((l, i) => {
    const path = `line ${l.id ?? i + 1}`
    const lneed = (rule: string, bt: string, what: string, v: unknown) => {
      if (v === undefined) add(rule, `${path}: the ${what} (${bt}) is missing`, { bt, path })
    }
    lneed('BR-21', 'BT-126', 'line identifier', l.id)
    lneed('BR-22', 'BT-129', 'invoiced quantity', l.quantity)
    lneed('BR-23', 'BT-130', 'unit of measure code', l.unit)
    lneed('BR-24', 'BT-131', 'line net amount', l.net_amount)
    lneed('BR-25', 'BT-153', 'item name', l.name)
    lneed('BR-26', 'BT-146', 'item net price', l.unit_price)
    lneed('BR-CO-04', 'BT-151', 'VAT category code', l.vat_category)
    const price = dec(l.unit_price)
    if (price !== undefined && price < 0n) add('BR-27', `${path}: the item net price (BT-146) ${l.unit_price} is negative`, { bt: 'BT-146', stated: l.unit_price, path })
    const gross = dec(l.gross_price)
    if (gross !== undefined && gross < 0n) add('BR-28', `${path}: the item gross price (BT-148) ${l.gross_price} is negative`, { bt: 'BT-148', stated: l.gross_price, path })
    decimalRule(add, 'BR-DEC-23', 'BT-131', 'line net amount', l.net_amount, path)
    adjustmentRules(add, l.allowances, false, `${path} allowance`, 'BR-41', 'BR-42', 'BR-CO-23', 'BT-136', 'BT-139', 'BT-140', 'BR-DEC-24', 'BR-DEC-25', 'BT-137')
    adjustmentRules(add, l.charges, false, `${path} charge`, 'BR-43', 'BR-44', 'BR-CO-24', 'BT-141', 'BT-144', 'BT-145', 'BR-DEC-27', 'BR-DEC-28', 'BT-142')
  })
  // Document allowances and charges (BR-31…BR-38, BR-CO-21/22).
  adjustmentRules(add, stated.allowances, true, 'document allowance', 'BR-31', 'BR-33', 'BR-CO-21', 'BT-92', 'BT-97', 'BT-98', 'BR-DEC-01', 'BR-DEC-02', 'BT-93', 'BR-32', 'BT-95')
  adjustmentRules(add, stated.charges, true, 'document charge', 'BR-36', 'BR-38', 'BR-CO-22', 'BT-99', 'BT-104', 'BT-105', 'BR-DEC-05', 'BR-DEC-06', 'BT-100', 'BR-37', 'BT-102')

  // Totals: decimals (BR-DEC) and the calculation rules (BR-CO-10…16) on the stated values.
  const totalName: Record<string, string> = {
    BT106: 'sum of invoice line net amounts', BT107: 'sum of allowances on document level', BT108: 'sum of charges on document level',
    BT109: 'invoice total amount without VAT', BT110: 'invoice total VAT amount', BT111: 'invoice total VAT amount in accounting currency',
    BT112: 'invoice total amount with VAT', BT113: 'paid amount', BT114: 'rounding amount', BT115: 'amount due for payment',
  }
  const decRule: Record<string, string> = { BT106: 'BR-DEC-09', BT107: 'BR-DEC-10', BT108: 'BR-DEC-11', BT109: 'BR-DEC-12', BT110: 'BR-DEC-13', BT111: 'BR-DEC-15', BT112: 'BR-DEC-14', BT113: 'BR-DEC-16', BT114: 'BR-DEC-17', BT115: 'BR-DEC-18' }
  for (const [k, v] of Object.entries(t)) decimalRule(add, decRule[k]!, `BT-${k.slice(2)}`, totalName[k]!, v, 'document totals')
  const compare = (rule: string, key: keyof typeof t, computed: Dec, how: string) => {
    const stated_ = dec(t[key])
    if (stated_ === undefined || stated_ === computed) return
    const bt = `BT-${String(key).slice(2)}`
    add(rule, `The ${totalName[key]} (${bt}) is ${t[key]}, but ${how} is ${show(computed)}`, { bt, stated: t[key], computed: show(computed), path: 'document totals' })
  }
  const lineSum = sum(stated.lines.map((l) => dec(l.net_amount)))
  const allowanceSum = sum(stated.allowances.map((a) => dec(a.amount)))
  const chargeSum = sum(stated.charges.map((a) => dec(a.amount)))
  compare('BR-CO-10', 'BT106', round2(lineSum), 'the sum of the line net amounts (BT-131)')
  if (t.BT107 !== undefined || stated.allowances.length) {
    if (t.BT107 === undefined) add('BR-CO-11', `The sum of allowances on document level (BT-107) is missing, the document allowances (BT-92) add up to ${show(round2(allowanceSum))}`, { bt: 'BT-107', computed: show(round2(allowanceSum)) })
    else compare('BR-CO-11', 'BT107', round2(allowanceSum), 'the sum of the document allowance amounts (BT-92)')
  }
  if (t.BT108 !== undefined || stated.charges.length) {
    if (t.BT108 === undefined) add('BR-CO-12', `The sum of charges on document level (BT-108) is missing, the document charges (BT-99) add up to ${show(round2(chargeSum))}`, { bt: 'BT-108', computed: show(round2(chargeSum)) })
    else compare('BR-CO-12', 'BT108', round2(chargeSum), 'the sum of the document charge amounts (BT-99)')
  }
  const d = (k: keyof typeof t) => dec(t[k]) ?? 0n
  if (t.BT106 !== undefined && dec(t.BT106) !== undefined) compare('BR-CO-13', 'BT109', round2(d('BT106') - d('BT107') + d('BT108')), 'BT-106 − BT-107 + BT-108')
  if (t.BT109 !== undefined && dec(t.BT109) !== undefined) {
    // Without BT-110 the official rule holds when BT-112 = BT-109 (a document without VAT).
    if (t.BT110 === undefined) compare('BR-CO-15', 'BT112', d('BT109'), 'BT-109 (the document states no BT-110)')
    else if (!(arithmetic.co15AcceptsNoVat && dec(t.BT112) === d('BT109'))) compare('BR-CO-15', 'BT112', round2(d('BT109') + d('BT110')), 'BT-109 + BT-110')
  }
  if (t.BT112 !== undefined && dec(t.BT112) !== undefined) {
    // BR-CO-16: BT-115 = BT-112 − BT-113 + BT-114 (the schematron rounds each side to cents).
    const computed = round2(d('BT112') - d('BT113')) + d('BT114')
    compare('BR-CO-16', 'BT115', computed, t.BT114 !== undefined || t.BT113 !== undefined ? 'BT-112 − BT-113 + BT-114' : 'BT-112')
  }
  if (stated.vat_breakdown.length === 0) add('BR-CO-18', 'The document has no VAT breakdown (BG-23)', { bt: 'BG-23' })
  else if (t.BT110 !== undefined) compare('BR-CO-14', 'BT110', round2(sum(stated.vat_breakdown.map((v) => dec(v.tax)))), 'the sum of the VAT category tax amounts (BT-117)')
  // BR-CO-25 (a positive amount due needs BT-9 or BT-20) is in the standard's text but not in the
  // official schematron, which decides here: not checked.

  // VAT breakdown (BR-45…BR-48, BR-CO-17, BR-DEC-19/20).
  stated.vat_breakdown.forEach((v, i) => {
    const path = `VAT breakdown ${v.category ?? i + 1}${v.rate !== undefined ? ` ${v.rate} %` : ''}`
    if (v.taxable === undefined) add('BR-45', `${path}: the VAT category taxable amount (BT-116) is missing`, { bt: 'BT-116', path })
    if (v.tax === undefined) add('BR-46', `${path}: the VAT category tax amount (BT-117) is missing`, { bt: 'BT-117', path })
    if (v.category === undefined) add('BR-47', `${path}: the VAT category code (BT-118) is missing`, { bt: 'BT-118', path })
    if (v.rate === undefined && v.category !== 'O') add('BR-48', `${path}: the VAT category rate (BT-119) is missing`, { bt: 'BT-119', path })
    decimalRule(add, 'BR-DEC-19', 'BT-116', 'VAT category taxable amount', v.taxable, path)
    decimalRule(add, 'BR-DEC-20', 'BT-117', 'VAT category tax amount', v.tax, path)
    const taxable = dec(v.taxable)
    const tax = dec(v.tax)
    const rate = dec(v.rate)
    if (taxable === undefined || tax === undefined) return
    const expected = rate === undefined ? 0n : round2(percentOf(abs(taxable), rate))
    // XPath round() to a whole number: a rate and a tax "round to 0" below 0.5.
    const roundsToZero = (x: Dec) => x >= -ONE_UNIT / 2n && x < ONE_UNIT / 2n
    const within = arithmetic.co17Inclusive ? abs(tax) - ONE_UNIT <= expected && abs(tax) + ONE_UNIT >= expected : abs(tax) - ONE_UNIT < expected && abs(tax) + ONE_UNIT > expected
    const ok = (v.category !== undefined && arithmetic.co17Skips.has(v.category)) || (rate === undefined || roundsToZero(rate) ? roundsToZero(tax) : within)
    if (!ok) add('BR-CO-17', `${path}: the VAT category tax amount (BT-117) is ${v.tax}, but the taxable amount (BT-116) ${v.taxable} × ${v.rate ?? 0} % is ${show(expected)}`, { bt: 'BT-117', stated: v.tax, computed: show(expected), path })
  })

  vatCategoryRules(add, stated, facts, arithmetic)

  // Payment instructions (BR-49, BR-50, BR-61, BR-51).
  stated.payment_means.forEach((m, i) => {
    const path = `payment means ${i + 1}`
    if (m.code === undefined) add('BR-49', `${path}: the payment means type code (BT-81) is missing`, { bt: 'BT-81', path })
    if ((m.code === '30' || m.code === '58') && !m.account) add('BR-61', `${path}: payment means ${m.code} (credit transfer) needs the payment account identifier (BT-84)`, { bt: 'BT-84', path })
    if (m.card !== undefined && m.card.replace(/\s/g, '').length > 10) add('BR-51', `${path}: the payment card primary account number (BT-87) should show at most the first 6 and last 4 digits`, { bt: 'BT-87', path }, 'warning')
  })
  return out
}

type Add = (rule: string, message: string, extra?: Omit<Finding, 'rule' | 'severity' | 'message'>, severity?: Finding['severity']) => void

function decimalRule(add: Add, rule: string, bt: string, what: string, v: string | undefined, path: string) {
  if (v !== undefined && decimals(v) > 2) add(rule, `${path}: the ${what} (${bt}) ${v} has more than 2 decimals`, { bt, stated: v, path })
}

function adjustmentRules(
  add: Add, list: StatedAdjustment[], documentLevel: boolean, what: string,
  amountRule: string, reasonRule: string, reasonRuleCo: string, amountBt: string, reasonBt: string, codeBt: string,
  decAmount: string, decBase: string, baseBt: string, categoryRule?: string, categoryBt?: string,
) {
  list.forEach((a, i) => {
    const path = `${what} ${i + 1}`
    if (a.amount === undefined) add(amountRule, `${path}: the amount (${amountBt}) is missing`, { bt: amountBt, path })
    if (a.reason === undefined && a.reason_code === undefined) {
      add(reasonRule, `${path}: neither a reason (${reasonBt}) nor a reason code (${codeBt}) is given`, { bt: reasonBt, path })
      add(reasonRuleCo, `${path}: neither a reason (${reasonBt}) nor a reason code (${codeBt}) is given`, { bt: reasonBt, path })
    }
    if (documentLevel && categoryRule && a.vat_category === undefined) add(categoryRule, `${path}: the VAT category code (${categoryBt}) is missing`, { bt: categoryBt, path })
    decimalRule(add, decAmount, amountBt, 'amount', a.amount, path)
    decimalRule(add, decBase, baseBt, 'base amount', a.base_amount, path)
  })
}

/** BR-S/Z/E/AE/IC/G/O/AF/AG-01…14 and BR-B-01/02, on the stated lines, adjustments and breakdown. */
function vatCategoryRules(add: Add, stated: Stated, facts: Facts, arithmetic: Arithmetic) {
  const lines = stated.lines
  const allowances = stated.allowances
  const charges = stated.charges
  const breakdown = stated.vat_breakdown
  const used = new Set([...lines.map((l) => l.vat_category), ...allowances.map((a) => a.vat_category), ...charges.map((c) => c.vat_category), ...breakdown.map((v) => v.category)])
  const sellerVatOrTax = facts.sellerVatId !== undefined || facts.sellerTaxId !== undefined || facts.taxRepVatId !== undefined
  const sellerVat = facts.sellerVatId !== undefined || facts.taxRepVatId !== undefined
  for (const [code, { prefix, name }] of Object.entries(CATEGORY)) {
    if (!used.has(code)) continue
    const groups = breakdown.filter((v) => v.category === code)
    const inItems = lines.some((l) => l.vat_category === code) || allowances.some((a) => a.vat_category === code) || charges.some((c) => c.vat_category === code)
    const label = `VAT category ${code} ("${name}")`
    // -01: a breakdown for the category (exactly one for the categories without a rate of their own).
    const perRate = code === 'S' || code === 'L' || code === 'M'
    if (inItems && (perRate ? groups.length === 0 : groups.length !== 1)) {
      add(`${prefix}-01`, `Lines, allowances or charges use ${label}, but the VAT breakdown (BG-23) has ${groups.length} groups of it (${perRate ? 'at least one' : 'exactly one'} needed)`, { bt: 'BT-118', stated: String(groups.length) })
    }
    // -02…04: who must be identified.
    for (const [rule, where, bt, present] of [
      ['02', 'an invoice line', 'BT-151', lines.some((l) => l.vat_category === code)],
      ['03', 'a document allowance', 'BT-95', allowances.some((a) => a.vat_category === code)],
      ['04', 'a document charge', 'BT-102', charges.some((c) => c.vat_category === code)],
    ] as const) {
      if (!present) continue
      let problem: string | undefined
      if (code === 'O') {
        if (facts.sellerVatId !== undefined || facts.taxRepVatId !== undefined || facts.buyerVatId !== undefined) problem = 'the seller VAT identifier (BT-31), the tax representative VAT identifier (BT-63) and the buyer VAT identifier (BT-48) must all be absent'
      } else if (code === 'K') {
        if (!sellerVat || facts.buyerVatId === undefined) problem = 'the seller VAT identifier (BT-31) or tax representative VAT identifier (BT-63), and the buyer VAT identifier (BT-48), are needed'
      } else if (code === 'G') {
        if (!sellerVat) problem = 'the seller VAT identifier (BT-31) or tax representative VAT identifier (BT-63) is needed'
      } else if (code === 'AE') {
        if (!sellerVatOrTax || (facts.buyerVatId === undefined && facts.buyerLegalId === undefined)) problem = 'the seller VAT identifier (BT-31), tax registration identifier (BT-32) or tax representative VAT identifier (BT-63), and the buyer VAT identifier (BT-48) or legal registration identifier (BT-47), are needed'
      } else if (!sellerVatOrTax) problem = 'the seller VAT identifier (BT-31), tax registration identifier (BT-32) or tax representative VAT identifier (BT-63) is needed'
      if (problem) add(`${prefix}-${rule}`, `${where[0]!.toUpperCase()}${where.slice(1)} uses ${label} (${bt}): ${problem}`, { bt })
    }
    // -05…07: the rate each line, allowance and charge of the category gives.
    const rateProblem = (rate: string | undefined): string | undefined => {
      const r = dec(rate)
      if (code === 'O') return rate !== undefined ? 'must not have a VAT rate' : undefined
      if (code === 'S') return r === undefined || r <= 0n ? 'must have a VAT rate greater than zero' : undefined
      if (code === 'L' || code === 'M') return r === undefined || r < 0n ? 'must have a VAT rate of 0 or more' : undefined
      return r === undefined || r !== 0n ? 'must have a VAT rate of 0' : undefined
    }
    lines.forEach((l, i) => {
      if (l.vat_category !== code) return
      const p = rateProblem(l.vat_rate)
      if (p) add(`${prefix}-05`, `line ${l.id ?? i + 1}: a line of ${label} (BT-151) ${p} (BT-152 is ${l.vat_rate ?? 'absent'})`, { bt: 'BT-152', stated: l.vat_rate, path: `line ${l.id ?? i + 1}` })
    })
    for (const [rule, list, what, bt] of [['06', allowances, 'document allowance', 'BT-96'], ['07', charges, 'document charge', 'BT-103']] as const) {
      list.forEach((a, i) => {
        if (a.vat_category !== code) return
        const p = rateProblem(a.vat_rate)
        if (p) add(`${prefix}-${rule}`, `${what} ${i + 1}: a ${what} of ${label} ${p} (${bt} is ${a.vat_rate ?? 'absent'})`, { bt, stated: a.vat_rate, path: `${what} ${i + 1}` })
      })
    }
    // -08…10 per breakdown group.
    for (const v of groups) {
      const path = `VAT breakdown ${code}${v.rate !== undefined ? ` ${v.rate} %` : ''}`
      const rate = dec(v.rate)
      const sameRate = (r: string | undefined) => !perRate || dec(r) === rate
      const part = (x: Dec) => (arithmetic.roundParts ? round2(x) : x)
      const items = part(sum(lines.filter((l) => l.vat_category === code && sameRate(l.vat_rate)).map((l) => dec(l.net_amount))))
      const adj = part(sum(charges.filter((c) => c.vat_category === code && sameRate(c.vat_rate)).map((c) => dec(c.amount)))) - part(sum(allowances.filter((a) => a.vat_category === code && sameRate(a.vat_rate)).map((a) => dec(a.amount))))
      const expected = items + adj
      const taxable = dec(v.taxable)
      if (taxable !== undefined) {
        const tolerant = code === 'O' ? false : perRate ? arithmetic.perRateTolerance : arithmetic.otherTolerance
        const ok = tolerant ? taxable - ONE_UNIT < expected && taxable + ONE_UNIT > expected : taxable === expected
        if (!ok) add(`${prefix}-08`, `${path}: the taxable amount (BT-116) is ${v.taxable}, but the line net amounts (BT-131) plus charges (BT-99) less allowances (BT-92) of the category${perRate ? ' and rate' : ''} are ${show(expected)}`, { bt: 'BT-116', stated: v.taxable, computed: show(expected), path })
      }
      const tax = dec(v.tax)
      if (tax !== undefined) {
        if (perRate) {
          if (taxable !== undefined && rate !== undefined) {
            const want = round2(percentOf(abs(taxable), rate))
            if (!(abs(tax) - ONE_UNIT < want && abs(tax) + ONE_UNIT > want)) add(`${prefix}-09`, `${path}: the tax amount (BT-117) is ${v.tax}, but the taxable amount (BT-116) × the rate (BT-119) is ${show(want)}`, { bt: 'BT-117', stated: v.tax, computed: show(want), path })
          }
        } else if (tax !== 0n) add(`${prefix}-09`, `${path}: the tax amount (BT-117) of ${label} must be 0, it is ${v.tax}`, { bt: 'BT-117', stated: v.tax, computed: '0.00', path })
      }
      const exempt = v.exemption_reason !== undefined || v.exemption_code !== undefined
      if ((code === 'S' || code === 'Z' || code === 'L' || code === 'M') && exempt) {
        add(`${prefix}-10`, `${path}: ${label} must have neither an exemption reason (BT-120) nor an exemption reason code (BT-121)`, { bt: 'BT-120', path })
      }
      if ((code === 'E' || code === 'AE' || code === 'K' || code === 'G' || code === 'O') && !exempt) {
        add(`${prefix}-10`, `${path}: ${label} needs an exemption reason (BT-120) or an exemption reason code (BT-121)`, { bt: 'BT-120', path })
      }
    }
    if (code === 'O' && groups.length) {
      if (breakdown.some((v) => v.category !== 'O')) add('BR-O-11', 'A VAT breakdown of VAT category O ("Not subject to VAT") must be the only VAT breakdown (BG-23)', { bt: 'BT-118' })
      if (lines.some((l) => l.vat_category !== 'O')) add('BR-O-12', 'With a VAT breakdown of VAT category O every invoice line must be of category O (BT-151)', { bt: 'BT-151' })
      if (allowances.some((a) => a.vat_category !== 'O')) add('BR-O-13', 'With a VAT breakdown of VAT category O every document allowance must be of category O (BT-95)', { bt: 'BT-95' })
      if (charges.some((c) => c.vat_category !== 'O')) add('BR-O-14', 'With a VAT breakdown of VAT category O every document charge must be of category O (BT-102)', { bt: 'BT-102' })
    }
    if (code === 'K' && groups.length) {
      if (!facts.deliveryDate && !facts.invoicingPeriod) add('BR-IC-11', 'With VAT category K ("Intra-community supply") the actual delivery date (BT-72) or the invoicing period (BG-14) must be given', { bt: 'BT-72' })
      if (!facts.deliveryCountry) add('BR-IC-12', 'With VAT category K ("Intra-community supply") the deliver-to country code (BT-80) must be given', { bt: 'BT-80' })
    }
  }
  // Split payment (B): Italian only, never together with S.
  if (used.has('B')) {
    const foreign = facts.countries.filter((c) => c !== 'IT')
    if (foreign.length) add('BR-B-01', `VAT category B ("Split payment") is for Italian domestic invoices only, but the document has the country code(s) ${[...new Set(foreign)].join(', ')}`, { bt: 'BT-40' })
    if (used.has('S')) add('BR-B-02', 'An invoice with VAT category B ("Split payment") must not also use category S ("Standard rated")', { bt: 'BT-118' })
  }
}

export type { StatedLine }
