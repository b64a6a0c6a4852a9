// The request fields for allowances and charges (docs/einvoice.md, "Allowances and charges"):
// `allowances` / `charges` on the invoice (EN 16931 BG-20 / BG-21, each with its VAT category and
// rate) and on each line (BG-27 / BG-28, in the line's category). Every message names the field
// and its business term. The cross-field rules (a reason or a code, a category for the document's
// ones, nothing that turns a line or a VAT group negative) are in allowance-rules.ts.
import { z } from 'zod'
import { fieldMessage } from '../../platform/http/validate.ts'
import { ALLOWANCE_CODES, CHARGE_CODES } from './allowance-codes.ts'
import { TAX_CATEGORIES } from './vat.ts'

/** At most this many per document and per line: a real invoice has a handful. */
export const MAX_ADJUSTMENTS = 50

/** Business terms of each field, for document (BG-20, BG-21) and line (BG-27, BG-28) allowances and charges. */
export const ADJUSTMENT_TERMS = {
  document: {
    allowance: { amount: 'BT-92', reason: 'BT-97', reason_code: 'BT-98', tax_category: 'BT-95', tax_rate: 'BT-96', group: 'BG-20' },
    charge: { amount: 'BT-99', reason: 'BT-104', reason_code: 'BT-105', tax_category: 'BT-102', tax_rate: 'BT-103', group: 'BG-21' },
  },
  line: {
    allowance: { amount: 'BT-136', reason: 'BT-139', reason_code: 'BT-140', group: 'BG-27' },
    charge: { amount: 'BT-141', reason: 'BT-144', reason_code: 'BT-145', group: 'BG-28' },
  },
} as const

type Kind = 'allowance' | 'charge'

function adjustment(level: 'document' | 'line', kind: Kind) {
  const bt = ADJUSTMENT_TERMS[level][kind]
  const codes = kind === 'allowance' ? ALLOWANCE_CODES : CHARGE_CODES
  const codeHelp = kind === 'allowance' ? 'an UNTDID 5189 allowance reason code such as 95 (discount)' : 'an UNTDID 7161 charge reason code such as FC (freight)'
  return {
    amount: z
      .number({ error: fieldMessage(`(${bt.amount}) must be a number`) })
      .finite({ error: fieldMessage(`(${bt.amount}) must be a finite number`) })
      .gt(0, { error: fieldMessage(`(${bt.amount}) must be > 0 (an ${kind} is written as a positive amount)`) })
      .max(1_000_000_000_000, { error: fieldMessage(`(${bt.amount}) must be <= 1000000000000`) }),
    reason: z.string().trim().min(1, { error: fieldMessage(`(${bt.reason}) must not be empty`) }).max(1_000).optional(),
    reason_code: z.enum(codes, { error: fieldMessage(`(${bt.reason_code}) must be ${codeHelp}`) }).optional(),
  }
}

function documentAdjustment(kind: Kind) {
  const bt = ADJUSTMENT_TERMS.document[kind]
  return z.object({
    ...adjustment('document', kind),
    tax_category: z.enum(TAX_CATEGORIES, { error: fieldMessage(`(${bt.tax_category}) must be one of: ${TAX_CATEGORIES.join(', ')}`) }).optional(),
    tax_rate: z
      .number({ error: fieldMessage(`(${bt.tax_rate}) must be a number`) })
      .finite()
      .min(0, { error: fieldMessage(`(${bt.tax_rate}) must be >= 0`) })
      .max(100, { error: fieldMessage(`(${bt.tax_rate}) must be <= 100`) })
      .optional(),
  })
}

const lineAdjustment = (kind: Kind) => z.object(adjustment('line', kind))
const list = <T extends z.ZodType>(item: T) => z.array(item).max(MAX_ADJUSTMENTS).optional()

export const documentAllowanceSchema = documentAdjustment('allowance')
export const documentChargeSchema = documentAdjustment('charge')

/** Fields of a line item. */
export const lineAdjustments = {
  allowances: list(lineAdjustment('allowance')),
  charges: list(lineAdjustment('charge')),
}

/** Fields of the invoice. */
export const documentAdjustments = {
  allowances: list(documentAllowanceSchema),
  charges: list(documentChargeSchema),
}

export type DocumentAdjustment = z.infer<typeof documentAllowanceSchema>
export type LineAdjustment = z.infer<ReturnType<typeof lineAdjustment>>
