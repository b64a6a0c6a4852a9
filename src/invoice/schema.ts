// Request schemas of the invoice API (DESIGN.md §7 rules). Shared by /invoice, /demo-invoice and
// batches; the worker parses stored requests with the same schema.
import { z } from 'zod'
import { signupSchema } from '../platform/accounts.ts'
import { computeTotals, currencyExponent } from './money.ts'
import { formatProblems, rateProblems } from './einvoice-requirements.ts'
import { invoiceExtra, lineExtra, partyExtra } from './schema-einvoice.ts'

export const ITEMS_REQUIRED = 'items is required and must be a non-empty array'
export const MAX_ITEMS = 1_000
export const MAX_DEMO_ITEMS = 20

const text = (max: number) => z.string().max(max)
const money = (max: number) => z.number().finite().min(0).max(max)

const lineItem = z.object({
  description: z.string().trim().min(1).max(1_000),
  quantity: z.number().finite().gt(0).max(1_000_000_000),
  unit_price: money(1_000_000_000_000),
  ...lineExtra,
})

const party = z.object({
  name: text(200).optional(),
  address: text(1_000).optional(),
  email: text(254).optional(),
  phone: text(64).optional(),
  ...partyExtra,
})

const isPlainObject = (v: unknown) => typeof v === 'object' && v !== null && !Array.isArray(v)

function invoiceBody(maxItems: number) {
  // A body that is not an object has no items: it gets the seeded items message.
  return z.preprocess((v) => (isPlainObject(v) ? v : {}), invoiceObject(maxItems))
}

function invoiceObject(maxItems: number) {
  return z
    .object({
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
    })
    .superRefine((body, ctx) => {
      if (body.discount) {
        const t = computeTotals(body.items, { discount: body.discount }, body.currency ? currencyExponent(body.currency) : 2)
        if (t.taxable < 0n) ctx.addIssue({ code: 'custom', path: ['discount'], message: 'discount must not exceed the subtotal' })
      }
      for (const p of rateProblems(body)) ctx.addIssue({ code: 'custom', path: p.path, message: p.message })
      // One issue listing every missing term: /invoice reports the first issue only.
      const missing = formatProblems(body)
      if (missing.length) ctx.addIssue({ code: 'custom', path: [], message: missing.join('; ') })
    })
}

/** items is checked first so that a missing/empty list gets the seeded message. */
export const invoiceBodySchema = invoiceBody(MAX_ITEMS)
export const demoInvoiceBodySchema = invoiceBody(MAX_DEMO_ITEMS)
export type InvoiceRequest = z.infer<typeof invoiceBodySchema>

export const subscribeSchema = signupSchema
export const invoiceSchema = z.object({ body: invoiceBodySchema })
export const demoInvoiceSchema = z.object({ body: demoInvoiceBodySchema })
