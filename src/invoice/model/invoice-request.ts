// The shape of an invoice request (fields and their bounds), without the cross-field rules that
// invoice-schema.ts adds: the type InvoiceRequest comes from here, so the rule modules that read a request
// (einvoice-requirements.ts, payment-qr.ts) depend on the shape, not on the schema that uses them.
import { z } from 'zod'
import { invoiceExtra, lineExtra, partyExtra } from './einvoice-schema.ts'
import { documentAdjustments, lineAdjustments } from './allowance-schema.ts'

export const ITEMS_REQUIRED = 'items is required and must be a non-empty array'

const text = (max: number) => z.string().max(max)
const money = (max: number) => z.number().finite().min(0).max(max)

const lineItem = z.object({
  description: z.string().trim().min(1).max(1_000),
  quantity: z.number().finite().gt(0).max(1_000_000_000),
  unit_price: money(1_000_000_000_000),
  ...lineExtra,
  ...lineAdjustments,
})

const party = z.object({
  name: text(200).optional(),
  address: text(1_000).optional(),
  email: text(254).optional(),
  phone: text(64).optional(),
  ...partyExtra,
})

export function invoiceFields(maxItems: number) {
  return z.object({
    items: z
      .array(lineItem, { error: (i) => (i.code === 'invalid_type' ? ITEMS_REQUIRED : undefined) })
      .min(1, { error: ITEMS_REQUIRED })
      .max(maxItems, { error: `items must have at most ${maxItems} line items` }),
    from: party.optional(),
    to: party.optional(),
    invoice_number: text(100).optional(),
    date: text(100).optional(),
    due_date: text(100).optional(),
    currency_symbol: text(8).optional(),
    tax_rate: z.number().finite().min(0).max(100).optional(),
    discount: money(1_000_000_000_000).optional(),
    notes: text(10_000).optional(),
    footer: text(1_000).optional(),
    logo_url: z.string().max(2_048).optional(),
    payment_info: text(5_000).optional(),
    ...invoiceExtra,
    ...documentAdjustments,
  })
}

export type InvoiceRequest = z.infer<ReturnType<typeof invoiceFields>>
