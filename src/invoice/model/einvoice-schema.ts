// The request fields added for EN 16931 e-invoices, locales and payment QR codes (docs/einvoice.md).
// All optional: a request without them is the invoice it always was. invoice-schema.ts puts them into the
// invoice body; einvoice-requirements.ts checks what each output format needs of them.
import { z } from 'zod'
import { fieldMessage } from '../../platform/http/validate.ts'
import { TAX_CATEGORIES } from './vat.ts'

export const FORMATS = ['pdf', 'facturx', 'xrechnung', 'ubl'] as const
export type InvoiceFormat = (typeof FORMATS)[number]
export const XML_FORMATS: readonly InvoiceFormat[] = ['facturx', 'xrechnung', 'ubl']

export const LOCALES = ['en', 'de', 'fr', 'es', 'it', 'nl', 'pt-BR', 'ja', 'zh-CN'] as const
export type InvoiceLocale = (typeof LOCALES)[number]

const CURRENCIES = new Set(Intl.supportedValuesOf('currency'))
/** An ISO 4217 code Intl knows (only those have a number of decimals to compute with). */
export const isCurrency = (c: string) => /^[A-Z]{3}$/.test(c) && CURRENCIES.has(c)

const text = (max: number) => z.string().trim().min(1).max(max)
/** SIREN/SIRET are often written in groups: "123 456 789". */
const digitsOnly = (s: string) => s.replace(/[\s.]/g, '')

export const isoDate = z.string().regex(/^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$/, { error: fieldMessage('must be a date YYYY-MM-DD') })

/** Party fields beyond name/address/email/phone: the structured postal address and identifiers. */
export const partyExtra = {
  street: text(200).optional(),
  additional_street: text(200).optional(),
  city: text(100).optional(),
  postal_code: text(20).optional(),
  /** ISO 3166-1 alpha-2. */
  country: z.string().regex(/^[A-Z]{2}$/, { error: fieldMessage('must be an ISO 3166-1 alpha-2 country code such as DE') }).optional(),
  vat_id: text(30).optional(),
  tax_number: text(30).optional(),
  legal_id: text(50).optional(),
  contact: text(200).optional(),
  /** Commercial register entry (Handelsregister, RCS): printed in the footer, BT-30 / BT-33 in the XML. */
  register: z
    .object({
      number: text(100),
      court: text(200),
    })
    .optional(),
  /** French company ids (9 and 14 digits, Luhn check), printed under the seller. */
  siren: z.string().transform(digitsOnly).refine((s) => /^\d{9}$/.test(s) && luhn(s), { error: fieldMessage('must be a SIREN: 9 digits with a valid check digit') }).optional(),
  siret: z.string().transform(digitsOnly).refine((s) => /^\d{14}$/.test(s) && luhn(s), { error: fieldMessage('must be a SIRET: 14 digits with a valid check digit') }).optional(),
  /** Peppol participant id "scheme:id" (0208:0123456789); else the e-mail is the electronic address. */
  peppol_id: z.string().regex(/^\d{4}:[^\s:]{1,100}$/, { error: fieldMessage('must be a Peppol participant id like 0208:0123456789') }).optional(),
}

export const lineExtra = {
  tax_rate: z.number().finite().min(0).max(100).optional(),
  tax_category: z.enum(TAX_CATEGORIES).optional(),
  /** UN/ECE Recommendation 20 unit code (C62 = one, HUR = hour, DAY, KGM …). */
  unit: z.string().regex(/^[A-Z0-9]{1,3}$/, { error: fieldMessage('must be a UN/ECE Recommendation 20 unit code such as C62 or HUR') }).optional(),
}

const iban = z
  .string()
  .transform((s) => s.replace(/\s+/g, '').toUpperCase())
  .refine(validIban, { error: fieldMessage('must be a valid IBAN') })

export const paymentSchema = z.object({
  iban: iban.optional(),
  bic: z.string().regex(/^[A-Z]{4}[A-Z]{2}[A-Z0-9]{2}([A-Z0-9]{3})?$/, { error: fieldMessage('must be a BIC of 8 or 11 characters') }).optional(),
  account_name: text(70).optional(),
  /** Remittance information (BT-83), printed as the payment reference. */
  reference: text(140).optional(),
  /** Payment terms (BT-20). */
  // Trimmed like any text, except that a final XRechnung Skonto term (`#SKONTO#…#`) keeps the line
  // break XRechnung requires after it (BR-DE-18): a received XRechnung written again stays valid.
  terms: z
    .string()
    .max(1_000)
    .transform((s) => {
      const t = s.trim()
      return /\n\s*$/.test(s) && /(^|\n)#[^\n]*#$/.test(t) ? `${t}\n` : t
    })
    .pipe(z.string().min(1))
    .optional(),
  /** Late-payment penalty rate, % per year (French law asks for it on every B2B invoice); printed and added to BT-20. */
  late_penalty_rate: z.number().finite().min(0).max(100).optional(),
  /** Fixed compensation for recovery costs on late payment (40 EUR in the EU, Directive 2011/7/EU), in the invoice currency. */
  recovery_indemnity: z.number().finite().min(0).max(1_000_000).optional(),
})

export const invoiceExtra = {
  format: z.enum(FORMATS).optional(),
  document_type: z.enum(['invoice', 'credit_note']).optional(),
  currency: z
    .string()
    .refine(isCurrency, { error: fieldMessage('must be an ISO 4217 currency code such as EUR') })
    .optional(),
  locale: z.enum(LOCALES).optional(),
  tax_category: z.enum(TAX_CATEGORIES).optional(),
  tax_exemption_reason: text(500).optional(),
  buyer_reference: text(200).optional(),
  order_reference: text(200).optional(),
  preceding_invoice_number: text(100).optional(),
  delivery_date: isoDate.optional(),
  payment: paymentSchema.optional(),
  payment_qr: z.enum(['epc', 'swiss']).optional(),
}

/** The Luhn check SIREN and SIRET numbers carry. */
export function luhn(digits: string): boolean {
  let sum = 0
  for (let i = 0; i < digits.length; i++) {
    let d = Number(digits[digits.length - 1 - i])
    if (i % 2 === 1) d = d * 2 > 9 ? d * 2 - 9 : d * 2
    sum += d
  }
  return sum % 10 === 0
}

/** ISO 13616 check digits (mod 97). */
export function validIban(s: string): boolean {
  if (!/^[A-Z]{2}\d{2}[A-Z0-9]{11,30}$/.test(s)) return false
  const moved = s.slice(4) + s.slice(0, 4)
  let rem = 0
  for (const ch of moved) {
    const v = ch >= 'A' ? String(ch.charCodeAt(0) - 55) : ch
    for (const d of v) rem = (rem * 10 + Number(d)) % 97
  }
  return rem === 1
}
