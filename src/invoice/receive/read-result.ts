// The answer of POST /api/v1/einvoice/read (docs/einvoice-receiving.md): what the
// received document declares (profile), what it states (amounts exactly as written), the request
// it reads into (to post back to /invoice), the findings of the rules the document declares, and —
// apart from them — what this service would need to send it back in each format it writes.

/** Decimal text exactly as the document wrote it (trimmed): "-109.98", "336.91", "0.00". */
export type Amount = string

/**
 * The rule set a document is judged by, from its specification identifier (BT-24). Every set
 * includes the EN 16931 core rules; the others add their own only when the document declares them.
 * A BT-24 that names none of these is judged by the EN 16931 core rules (`en16931`), with an
 * `info` finding `BT-24` saying so.
 */
export type RuleSet =
  | 'en16931'
  | 'xrechnung'
  | 'xrechnung-extension'
  | 'peppol-bis'
  | 'factur-x-minimum'
  | 'factur-x-basic-wl'
  | 'factur-x-basic'
  | 'factur-x-en16931'
  | 'factur-x-extended'

export interface Profile {
  /** BT-24 as written (CII: GuidelineSpecifiedDocumentContextParameter/ID, UBL: CustomizationID). */
  id?: string
  /** BT-23 as written (UBL ProfileID, CII BusinessProcessSpecifiedDocumentContextParameter/ID). */
  process?: string
  rules: RuleSet
}

export interface StatedAdjustment {
  /** BT-92 / BT-99 (document), BT-136 / BT-141 (line). */
  amount?: Amount
  /** BT-93 / BT-100 / BT-137 / BT-142. */
  base_amount?: Amount
  /** BT-94 / BT-101 / BT-138 / BT-143. */
  percentage?: Amount
  /** BT-97 / BT-104 / BT-139 / BT-144. */
  reason?: string
  /** BT-98 / BT-105 / BT-140 / BT-145. */
  reason_code?: string
  /** Document level only: BT-95 / BT-102 and BT-96 / BT-103. */
  vat_category?: string
  vat_rate?: Amount
}

export interface StatedLine {
  /** BT-126 */
  id?: string
  /** BT-153 */
  name?: string
  /** BT-129 (negative for a return), and its unit BT-130. */
  quantity?: Amount
  unit?: string
  /** BT-146 item net price, BT-148 gross price, BT-149 price base quantity (BT-150 its unit). */
  unit_price?: Amount
  gross_price?: Amount
  price_base_quantity?: Amount
  /** BT-131 exactly as stated — never recomputed from quantity × price. */
  net_amount?: Amount
  /** BT-151, BT-152 */
  vat_category?: string
  vat_rate?: Amount
  allowances: StatedAdjustment[]
  charges: StatedAdjustment[]
}

export interface StatedTotals {
  /** Sum of line net amounts */
  BT106?: Amount
  /** Sum of allowances on document level */
  BT107?: Amount
  /** Sum of charges on document level */
  BT108?: Amount
  /** Total without VAT */
  BT109?: Amount
  /** Total VAT in the invoice currency (BT-5) */
  BT110?: Amount
  /** Total VAT in the VAT accounting currency (BT-6), when the document has one */
  BT111?: Amount
  /** Total with VAT */
  BT112?: Amount
  /** Paid amount */
  BT113?: Amount
  /** Rounding amount */
  BT114?: Amount
  /** Amount due for payment */
  BT115?: Amount
}

export interface StatedVat {
  /** BT-118 (S, Z, E, AE, K, G, O, L, M, B …), BT-119 (absent for O). */
  category?: string
  rate?: Amount
  /** BT-116 taxable amount, BT-117 tax amount. */
  taxable?: Amount
  tax?: Amount
  /** BT-120 exemption reason text, BT-121 exemption reason code. */
  exemption_reason?: string
  exemption_code?: string
}

export interface StatedPaymentMeans {
  /** BT-81 (UNTDID 4461: 30, 31, 42, 48, 49, 57, 58, 59, ZZZ …) and BT-82. */
  code?: string
  text?: string
  /** BT-83 remittance information. */
  reference?: string
  /** BG-17 credit transfer: BT-84 account id (IBAN or other), BT-85 name, BT-86 provider (BIC). */
  account?: string
  account_name?: string
  bic?: string
  /** BG-18 card: BT-87 primary account number (as written), BT-88 holder. */
  card?: string
  card_holder?: string
  /** BG-19 direct debit: BT-89 mandate, BT-90 creditor id, BT-91 debited account. */
  mandate?: string
  creditor_id?: string
  debited_account?: string
}

/** What the document states, amounts as written (nothing recomputed, nothing normalised). */
export interface Stated {
  /** BT-5, BT-6 */
  currency?: string
  tax_currency?: string
  lines: StatedLine[]
  allowances: StatedAdjustment[]
  charges: StatedAdjustment[]
  totals: StatedTotals
  vat_breakdown: StatedVat[]
  payment_means: StatedPaymentMeans[]
  /** BT-20 as written, line breaks kept. */
  payment_terms?: string
}

/**
 * A finding about the received document, by the rules it declares. `rule` is the official rule id
 * (BR-CO-10, BR-S-08, BR-DE-15, PEPPOL-EN16931-R003, BR-CL-04 …) or `XSD`, `BT-24`, `IBAN`, `BIC`,
 * `SIREN` for the checks EN 16931 does not make (never more than warnings). Severity follows the
 * official rule's flag: fatal → error, warning → warning; `info` says what was not checked.
 */
export interface Finding {
  rule: string
  severity: 'error' | 'warning' | 'info'
  /** One clean sentence naming the field, its BT and the rule; no control characters. */
  message: string
  /** The business term(s) concerned: "BT-106", "BT-117". */
  bt?: string
  /** For calculation rules: the value the document states and the value the rule computes from
   *  the document's own stated values (e.g. BR-CO-10: BT-106 stated, Σ BT-131 computed). */
  stated?: Amount
  computed?: Amount
  /** Where in the document: "line 3", "VAT breakdown S 19", "document allowance 1" … */
  path?: string
}

/** One thing the request would need before this service writes it in a format (not an error of the
 *  received document): `path` names the request field, `bt` its business term when it has one. */
export interface ResendNeed {
  message: string
  path?: string
  bt?: string
}

export type ResendFormat = 'pdf' | 'ubl' | 'xrechnung' | 'facturx'

export interface ReadResult {
  /** ubl, cii, or facturx (CII inside a PDF). */
  source: 'ubl' | 'cii' | 'facturx'
  /** For a PDF: the name of the embedded file read (factur-x.xml, zugferd-invoice.xml …). */
  attachment?: string
  profile: Profile
  /** The invoice request the document reads into (post it to /invoice as it is; its `format` is
   *  the one the document came in). Amounts here are this service's request fields: a document
   *  whose stated amounts the request cannot express (a line net amount other than quantity ×
   *  price, a rounding amount, a paid amount) is described exactly by `stated`, not by this. */
  invoice: Record<string, any>
  stated: Stated
  findings: Finding[]
  /** "To send this back as <format> you would need …": empty list = the request is accepted for
   *  that format as it is. Never findings about the received document. */
  resend: Record<ResendFormat, ResendNeed[]>
}
