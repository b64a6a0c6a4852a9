// Request schemas of the invoice API (rules: docs/invoice.md, "Decisions where the spec is
// silent"). Shared by /invoice, /demo-invoice and
// batches; the worker parses stored requests with the same schema.
import { z } from 'zod'
import { signupSchema } from '../platform/accounts.ts'
import { currencyExponent } from './model/money.ts'
import { adjustmentProblems } from './model/allowance-rules.ts'
import { formatProblems, rateProblems } from './model/einvoice-requirements.ts'
import { invoiceFields, ITEMS_REQUIRED, type InvoiceRequest } from './model/invoice-request.ts'
import { isCurrency } from './model/einvoice-schema.ts'

export const MAX_ITEMS = 1_000
export const MAX_DEMO_ITEMS = 20

const isPlainObject = (v: unknown) => typeof v === 'object' && v !== null && !Array.isArray(v)

function invoiceBody(maxItems: number) {
  // A body that is not an object has no items: it gets the seeded items message.
  return z.preprocess((v) => (isPlainObject(v) ? v : {}), invoiceObject(maxItems))
}

function invoiceObject(maxItems: number) {
  return invoiceFields(maxItems)
    .superRefine((body, ctx) => {
      // zod runs this despite a refused currency (already reported), whose decimals are unknown.
      if (body.currency !== undefined && !isCurrency(body.currency)) return
      // Discount, allowances and charges: nothing may turn a line, a VAT group or the total negative.
      for (const p of adjustmentProblems(body, body.currency ? currencyExponent(body.currency) : 2)) ctx.addIssue({ code: 'custom', path: p.path, message: p.message })
      for (const p of rateProblems(body)) ctx.addIssue({ code: 'custom', path: p.path, message: p.message })
      // One issue listing every missing term: /invoice reports the first issue only.
      const missing = formatProblems(body)
      if (missing.length) ctx.addIssue({ code: 'custom', path: [], message: missing.join('; ') })
    })
}

/** items is checked first so that a missing/empty list gets the seeded message. */
export const invoiceBodySchema = invoiceBody(MAX_ITEMS)
export const demoInvoiceBodySchema = invoiceBody(MAX_DEMO_ITEMS)
/**
 * A request's fields and their bounds, without the cross-field rules (VAT groups, allowances,
 * e-invoice requirements): what the render job checks of the request it carries, which the
 * ingress parsed with invoiceBodySchema just before (job-contracts.ts).
 */
export const invoiceRequestShape = invoiceFields(MAX_ITEMS)
export { ITEMS_REQUIRED, type InvoiceRequest }

export const subscribeSchema = signupSchema

/** Ids of stored invoices and batches in a path. */
export const storedId = z.string().regex(/^[0-9A-Za-z]{1,64}$/, { error: 'id is not valid' })
export const invoiceIdSchema = z.object({ params: z.object({ id: storedId }) })
export const invoiceSchema = z.object({ body: invoiceBodySchema })
export const demoInvoiceSchema = z.object({ body: demoInvoiceBodySchema })
