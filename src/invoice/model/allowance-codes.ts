// Reason codes of allowances (UNTDID 5189, the subset EN 16931 allows) and charges (UNTDID 7161),
// and the names this service prints and writes for them when a request sends a code without a
// text (docs/einvoice.md, "Allowances and charges"). The lists are those of @e-invoice-eu/core's
// invoice schema (a test compares them), kept here so the ingress need not load that library.
// Names exist in en, de and fr; other locales read the English name.

export const ALLOWANCE_CODES = ['41', '42', '60', '62', '63', '64', '65', '66', '67', '68', '70', '71', '88', '95', '100', '102', '103', '104', '105'] as const

// prettier-ignore
export const CHARGE_CODES = [
  'AA', 'AAA', 'AAC', 'AAD', 'AAE', 'AAF', 'AAH', 'AAI', 'AAS', 'AAT', 'AAV', 'AAY', 'AAZ', 'ABA', 'ABB', 'ABC', 'ABD', 'ABF', 'ABK', 'ABL', 'ABN', 'ABR', 'ABS', 'ABT', 'ABU',
  'ACF', 'ACG', 'ACH', 'ACI', 'ACJ', 'ACK', 'ACL', 'ACM', 'ACS', 'ADC', 'ADE', 'ADJ', 'ADK', 'ADL', 'ADM', 'ADN', 'ADO', 'ADP', 'ADQ', 'ADR', 'ADT', 'ADW', 'ADY', 'ADZ',
  'AEA', 'AEB', 'AEC', 'AED', 'AEF', 'AEH', 'AEI', 'AEJ', 'AEK', 'AEL', 'AEM', 'AEN', 'AEO', 'AEP', 'AES', 'AET', 'AEU', 'AEV', 'AEW', 'AEX', 'AEY', 'AEZ', 'AJ', 'AU',
  'CA', 'CAB', 'CAD', 'CAE', 'CAF', 'CAI', 'CAJ', 'CAK', 'CAL', 'CAM', 'CAN', 'CAO', 'CAP', 'CAQ', 'CAR', 'CAS', 'CAT', 'CAU', 'CAV', 'CAW', 'CAX', 'CAY', 'CAZ', 'CD',
  'CG', 'CS', 'CT', 'DAB', 'DAC', 'DAD', 'DAF', 'DAG', 'DAH', 'DAI', 'DAJ', 'DAK', 'DAL', 'DAM', 'DAN', 'DAO', 'DAP', 'DAQ', 'DL', 'EG', 'EP', 'ER', 'FAA', 'FAB', 'FAC',
  'FC', 'FH', 'FI', 'GAA', 'HAA', 'HD', 'HH', 'IAA', 'IAB', 'ID', 'IF', 'IR', 'IS', 'KO', 'L1', 'LA', 'LAA', 'LAB', 'LF', 'MAE', 'MI', 'ML', 'NAA', 'OA', 'PA', 'PAA', 'PC',
  'PL', 'PRV', 'RAB', 'RAC', 'RAD', 'RAF', 'RE', 'RF', 'RH', 'RV', 'SA', 'SAA', 'SAD', 'SAE', 'SAI', 'SG', 'SH', 'SM', 'SU', 'TAB', 'TAC', 'TT', 'TV', 'V1', 'V2', 'WH',
  'XAA', 'YY', 'ZZZ',
] as const

export type AllowanceCode = (typeof ALLOWANCE_CODES)[number]
export type ChargeCode = (typeof CHARGE_CODES)[number]

type Names = { en: string; de: string; fr: string }

const ALLOWANCE_NAMES: Record<AllowanceCode, Names> = {
  '41': { en: 'Bonus for works ahead of schedule', de: 'Bonus für vorzeitige Fertigstellung', fr: 'Prime pour travaux en avance' },
  '42': { en: 'Other bonus', de: 'Sonstiger Bonus', fr: 'Autre prime' },
  '60': { en: "Manufacturer's consumer discount", de: 'Herstellerrabatt', fr: 'Remise consommateur du fabricant' },
  '62': { en: 'Due to military status', de: 'Nachlass für Militärangehörige', fr: 'Remise statut militaire' },
  '63': { en: 'Due to work accident', de: 'Nachlass wegen Arbeitsunfall', fr: 'Remise pour accident du travail' },
  '64': { en: 'Special agreement', de: 'Sondervereinbarung', fr: 'Accord spécial' },
  '65': { en: 'Production error discount', de: 'Nachlass wegen Produktionsfehler', fr: 'Remise pour défaut de production' },
  '66': { en: 'New outlet discount', de: 'Neueröffnungsrabatt', fr: 'Remise nouveau point de vente' },
  '67': { en: 'Sample discount', de: 'Musterrabatt', fr: 'Remise sur échantillon' },
  '68': { en: 'End-of-range discount', de: 'Auslaufrabatt', fr: 'Remise fin de série' },
  '70': { en: 'Incoterm discount', de: 'Incoterm-Nachlass', fr: 'Remise Incoterm' },
  '71': { en: 'Point of sales threshold allowance', de: 'Nachlass ab Umsatzschwelle', fr: 'Remise seuil point de vente' },
  '88': { en: 'Material surcharge/deduction', de: 'Materialzu-/-abschlag', fr: 'Supplément/déduction matière' },
  '95': { en: 'Discount', de: 'Rabatt', fr: 'Remise' },
  '100': { en: 'Special rebate', de: 'Sonderrabatt', fr: 'Rabais spécial' },
  '102': { en: 'Fixed long term', de: 'Langfristiger Festrabatt', fr: 'Remise fixe à long terme' },
  '103': { en: 'Temporary', de: 'Befristeter Rabatt', fr: 'Remise temporaire' },
  '104': { en: 'Standard', de: 'Standardrabatt', fr: 'Remise standard' },
  '105': { en: 'Yearly turnover', de: 'Jahresumsatzbonus', fr: "Ristourne sur chiffre d'affaires annuel" },
}

/** The charges invoices carry most; any other code prints as "Charge ZZZ" (its text is the sender's to give). */
const CHARGE_NAMES: Partial<Record<ChargeCode, Names>> = {
  FC: { en: 'Freight service', de: 'Fracht', fr: 'Frais de transport' },
  SAA: { en: 'Shipping and handling', de: 'Versand und Bearbeitung', fr: "Frais d'expédition et de manutention" },
  DL: { en: 'Delivery', de: 'Lieferung', fr: 'Livraison' },
  PC: { en: 'Packing', de: 'Verpackung', fr: 'Emballage' },
  ABL: { en: 'Additional packaging', de: 'Zusätzliche Verpackung', fr: 'Emballage supplémentaire' },
  FI: { en: 'Financing', de: 'Finanzierung', fr: 'Financement' },
  CG: { en: 'Cleaning', de: 'Reinigung', fr: 'Nettoyage' },
  ADR: { en: 'Other services', de: 'Sonstige Leistungen', fr: 'Autres services' },
  ZZZ: { en: 'Mutually defined', de: 'Vereinbarter Zuschlag', fr: 'Frais convenus' },
}

const GENERIC: Record<'allowance' | 'charge', Names> = {
  allowance: { en: 'Allowance', de: 'Nachlass', fr: 'Remise' },
  charge: { en: 'Charge', de: 'Zuschlag', fr: 'Frais' },
}

/** de and fr have their own names; every other locale reads English. */
function pick(n: Names, locale: string | undefined): string {
  return locale === 'de' || locale === 'fr' ? n[locale] : n.en
}

/** The name of a reason code in the invoice's language, or undefined for a charge code without one. */
export function reasonName(kind: 'allowance' | 'charge', code: string, locale: string | undefined): string | undefined {
  const n = kind === 'allowance' ? ALLOWANCE_NAMES[code as AllowanceCode] : CHARGE_NAMES[code as ChargeCode]
  return n ? pick(n, locale) : undefined
}

/** What the document calls an allowance or charge: its text, else its code's name, else "Charge ZZZ". */
export function reasonText(kind: 'allowance' | 'charge', a: { reason?: string; reason_code?: string }, locale: string | undefined): string {
  if (a.reason) return a.reason
  const named = a.reason_code ? reasonName(kind, a.reason_code, locale) : undefined
  return named ?? `${pick(GENERIC[kind], locale)}${a.reason_code ? ` ${a.reason_code}` : ''}`
}
