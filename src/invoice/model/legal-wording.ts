// The wording the law expects on an invoice, in the invoice's language (docs/einvoice.md, "Legal
// wording by language"; English outside de and fr): the notes of the categories that carry no VAT
// (§ 14a UStG's "Steuerschuldnerschaft des Leistungsempfängers" for reverse charge, the CGI's
// "Autoliquidation"), the seller's register entry, and the late-payment mentions French law
// requires. The same texts go on the PDF and into the XML (BT-120, BT-33, BT-20); a request's own
// `tax_exemption_reason` replaces the category note in both.
import { currencyExponent, toMinor } from './money.ts'
import type { TaxCategory } from './vat.ts'

type Exempt = Exclude<TaxCategory, 'S' | 'Z' | 'E'>

const TEXT: Record<'en' | 'de' | 'fr', Record<Exempt, string>> = {
  en: { AE: 'Reverse charge', K: 'Intra-Community supply', G: 'Export outside the EU', O: 'Not subject to VAT' },
  de: {
    AE: 'Steuerschuldnerschaft des Leistungsempfängers',
    K: 'Steuerfreie innergemeinschaftliche Lieferung',
    G: 'Steuerfreie Ausfuhrlieferung',
    O: 'Nicht im Inland steuerbare Leistung',
  },
  fr: {
    AE: 'Autoliquidation',
    K: 'Exonération de TVA, article 262 ter I du CGI (livraison intracommunautaire)',
    G: 'Exonération de TVA, article 262 I du CGI (exportation)',
    O: 'Opération hors du champ d’application de la TVA',
  },
}

/** The legal note of a category without VAT in the invoice's language (English outside de and fr). */
export function exemptionNote(category: TaxCategory, locale: string | undefined): string | undefined {
  const texts = TEXT[locale === 'de' || locale === 'fr' ? locale : 'en']
  return texts[category as Exempt]
}

const MENTIONS = {
  en: {
    register: 'Registered: {court}, {number}',
    latePenalty: 'Late payment penalties: {rate}% per year',
    recoveryIndemnity: 'Fixed compensation for recovery costs in case of late payment: {amount}',
  },
  de: {
    register: 'Registergericht: {court}, {number}',
    latePenalty: 'Verzugszinsen: {rate} % p. a.',
    recoveryIndemnity: 'Pauschale für Beitreibungskosten bei Zahlungsverzug: {amount}',
  },
  fr: {
    register: 'Immatriculation : {court} {number}',
    latePenalty: 'Pénalités de retard : taux annuel de {rate} %',
    recoveryIndemnity: 'Indemnité forfaitaire pour frais de recouvrement en cas de retard de paiement : {amount}',
  },
}

const mentions = (locale: string | undefined) => MENTIONS[locale === 'de' || locale === 'fr' ? locale : 'en']

/** "Registergericht: Amtsgericht Charlottenburg, HRB 187654 B" (seller additional legal information, BT-33). */
export function registerNote(register: { number: string; court: string } | undefined, locale: string | undefined): string | undefined {
  return register ? mentions(locale).register.replace('{court}', register.court).replace('{number}', register.number) : undefined
}

interface LatePayment {
  locale?: string
  currency?: string
  payment?: { late_penalty_rate?: number; recovery_indemnity?: number }
}

/** The late-payment mentions (penalty rate, recovery indemnity) a request gives, worded for its language. */
export function latePaymentMentions(req: LatePayment, money: (minor: bigint) => string): string[] {
  const m = mentions(req.locale)
  const p = req.payment
  const out: string[] = []
  if (p?.late_penalty_rate !== undefined) {
    out.push(m.latePenalty.replace('{rate}', new Intl.NumberFormat(req.locale ?? 'en', { maximumFractionDigits: 4 }).format(p.late_penalty_rate)))
  }
  if (p?.recovery_indemnity !== undefined) {
    out.push(m.recoveryIndemnity.replace('{amount}', money(toMinor(p.recovery_indemnity, req.currency ? currencyExponent(req.currency) : 2))))
  }
  return out
}
