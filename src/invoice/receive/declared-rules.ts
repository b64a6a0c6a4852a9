// The rule set a received e-invoice declares (its specification identifier BT-24), and the rules
// that set adds to the EN 16931 core: XRechnung's BR-DE rules and Peppol BIS Billing 3.0's
// PEPPOL-EN16931 rules, each only when the document declares it (docs/einvoice-receiving.md). Factur-X profiles add no business rule of their own to EN 16931 here. Severities
// follow each rule set's own flags (XRechnung: BR-DE-17, 19, 20, 21 are warnings).
import type { Finding, Profile, RuleSet, Stated } from './read-result.ts'
import type { Facts } from './received.ts'

/** The rule set of a BT-24 (and, for Factur-X, where the XML came from). */
export function profileOf(id: string | undefined, process: string | undefined, fromPdf: boolean): { profile: Profile; known: boolean } {
  const s = (id ?? '').toLowerCase()
  let rules: RuleSet = 'en16931'
  let known = true
  if (/xeinkauf\.de:kosit:extension:xrechnung/.test(s)) rules = 'xrechnung-extension'
  else if (/xeinkauf\.de:kosit:xrechnung/.test(s)) rules = 'xrechnung'
  else if (/urn:fdc:peppol\.eu:2017:poacc:billing:3\.0/.test(s)) rules = 'peppol-bis'
  else if (/factur-x\.eu:1p0:minimum|zugferd\.de:2p0:minimum/.test(s)) rules = 'factur-x-minimum'
  else if (/factur-x\.eu:1p0:basicwl|zugferd\.de:2p0:basicwl/.test(s)) rules = 'factur-x-basic-wl'
  else if (/factur-x\.eu:1p0:basic|zugferd\.de:2p0:basic/.test(s)) rules = 'factur-x-basic'
  else if (/factur-x\.eu:1p0:extended|zugferd\.de:2p0:extended/.test(s)) rules = 'factur-x-extended'
  else if (/^urn:cen\.eu:en16931:2017$/.test(s.trim())) rules = fromPdf ? 'factur-x-en16931' : 'en16931'
  else known = /^urn:cen\.eu:en16931:2017/.test(s)
  return { profile: { ...(id !== undefined ? { id } : {}), ...(process !== undefined ? { process } : {}), rules }, known }
}

export interface DeclaredInput {
  stated: Stated
  facts: Facts
  request: Record<string, any>
  processId?: string
}

/** BR-DE-18: each Skonto term `#SKONTO#TAGE=n#PROZENT=n.nn#` (optionally `BASISBETRAG=n.nn#`) on a line of its own, ended by a line break. */
const SKONTO_LINE = /^#SKONTO#TAGE=[0-9]+#PROZENT=[0-9]+\.[0-9]{2}(#BASISBETRAG=-?[0-9]+\.[0-9]{2})?#$/

export function declaredFindings(rules: RuleSet, input: DeclaredInput): Finding[] {
  if (rules === 'xrechnung' || rules === 'xrechnung-extension') return xrechnungFindings(input)
  if (rules === 'peppol-bis') return peppolFindings(input)
  return []
}

function xrechnungFindings({ stated, facts, request }: DeclaredInput): Finding[] {
  const out: Finding[] = []
  const add = (rule: string, message: string, bt: string, severity: Finding['severity'] = 'error', extra: Partial<Finding> = {}) =>
    out.push({ rule, severity, message: `${message} (${rule}, XRechnung)`, bt, ...extra })
  const from = request.from ?? {}
  const to = request.to ?? {}
  if (stated.payment_means.length === 0) add('BR-DE-1', 'The payment instructions (BG-16) are missing', 'BG-16')
  if (!from.contact && !from.phone && !from.email) add('BR-DE-2', 'The seller contact (BG-6) is missing', 'BG-6')
  if (!from.city) add('BR-DE-3', 'The seller city (BT-37) is missing', 'BT-37')
  if (!from.postal_code) add('BR-DE-4', 'The seller post code (BT-38) is missing', 'BT-38')
  if (!from.contact) add('BR-DE-5', 'The seller contact point (BT-41) is missing', 'BT-41')
  if (!from.phone) add('BR-DE-6', 'The seller contact telephone number (BT-42) is missing', 'BT-42')
  if (!from.email) add('BR-DE-7', 'The seller contact email address (BT-43) is missing', 'BT-43')
  if (!to.city) add('BR-DE-8', 'The buyer city (BT-52) is missing', 'BT-52')
  if (!to.postal_code) add('BR-DE-9', 'The buyer post code (BT-53) is missing', 'BT-53')
  if (!request.buyer_reference) add('BR-DE-15', 'The buyer reference (BT-10) is missing', 'BT-10')
  const taxed = ['S', 'Z', 'E', 'AE', 'K', 'G', 'L', 'M']
  const categories = new Set([...stated.lines.map((l) => l.vat_category), ...stated.vat_breakdown.map((v) => v.category)])
  if (taxed.some((c) => categories.has(c)) && !facts.sellerVatId && !facts.sellerTaxId && !facts.taxRepVatId) {
    add('BR-DE-16', 'VAT categories other than O are used, but neither the seller VAT identifier (BT-31), the seller tax registration identifier (BT-32) nor a tax representative (BG-11) is given', 'BT-31')
  }
  if (facts.typeCode !== undefined && !['326', '380', '384', '389', '381', '875', '876', '877'].includes(facts.typeCode)) {
    add('BR-DE-17', `The invoice type code (BT-3) ${facts.typeCode} is not one XRechnung lists`, 'BT-3', 'warning', { stated: facts.typeCode })
  }
  const terms = stated.payment_terms
  if (terms && terms.includes('#SKONTO#')) {
    const lines = terms.split('\n')
    const last = lines.pop()
    const bad = lines.filter((l) => l.startsWith('#') && !SKONTO_LINE.test(l.trim()))
    if (last !== '' && last?.startsWith('#')) add('BR-DE-18', 'The payment terms (BT-20) end with a Skonto term that has no final line break', 'BT-20')
    else if (bad.length) add('BR-DE-18', `The payment terms (BT-20) have a Skonto term not in the form #SKONTO#TAGE=n#PROZENT=n.nn#: ${bad[0]!.slice(0, 80)}`, 'BT-20')
  }
  stated.payment_means.forEach((m, i) => {
    const path = `payment means ${i + 1}`
    const transfer = m.account !== undefined
    const card = m.card !== undefined
    const debit = m.mandate !== undefined || m.debited_account !== undefined
    if ((m.code === '30' || m.code === '58') && (!transfer || card || debit)) add('BR-DE-23', `${path}: a credit transfer (BT-81 ${m.code}) needs the credit transfer group (BG-17) and neither card (BG-18) nor direct debit (BG-19) information`, 'BG-17', 'error', { path })
    if ((m.code === '48' || m.code === '54' || m.code === '55') && (!card || transfer || debit)) add('BR-DE-24', `${path}: a card payment (BT-81 ${m.code}) needs the card information (BG-18) and neither credit transfer (BG-17) nor direct debit (BG-19) information`, 'BG-18', 'error', { path })
    if (m.code === '59' && (!debit || transfer || card)) add('BR-DE-25', `${path}: a direct debit (BT-81 59) needs the direct debit information (BG-19) and neither credit transfer (BG-17) nor card (BG-18) information`, 'BG-19', 'error', { path })
  })
  return out
}

function peppolFindings({ facts, request, processId }: DeclaredInput): Finding[] {
  const out: Finding[] = []
  const add = (rule: string, message: string, bt: string) => out.push({ rule, severity: 'error', message: `${message} (${rule}, Peppol BIS Billing 3.0)`, bt })
  if (!processId) add('PEPPOL-EN16931-R001', 'The business process (BT-23) is missing', 'BT-23')
  if (!request.buyer_reference && !request.order_reference) add('PEPPOL-EN16931-R003', 'Neither a buyer reference (BT-10) nor a purchase order reference (BT-13) is given', 'BT-10')
  if (!facts.buyerEndpoint) add('PEPPOL-EN16931-R010', 'The buyer electronic address (BT-49) is missing', 'BT-49')
  if (!facts.sellerEndpoint) add('PEPPOL-EN16931-R020', 'The seller electronic address (BT-34) is missing', 'BT-34')
  return out
}
