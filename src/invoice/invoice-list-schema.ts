// Request schema of GET /invoices (invoice-list-routes.ts): filters, page size and the cursor.
import { z } from 'zod'
import { atField } from '../platform/http/validate.ts'
import { FORMATS } from './model/einvoice-schema.ts'

export const MAX_LIST_LIMIT = 100
/** `<created_at in ms>_<invoice id>`: the last invoice of a page, which the next one starts below. */
const CURSOR = /^(\d{1,15})_([0-9A-Za-z]{1,64})$/

const day = /^\d{4}-\d{2}-\d{2}$/
/** A day (YYYY-MM-DD, UTC) or an ISO 8601 time with its zone. */
const when = (end: boolean) =>
  z
    .string()
    .max(40)
    .refine((s) => (day.test(s) || /[zZ]|[+-]\d{2}:\d{2}$/.test(s)) && Number.isFinite(Date.parse(s)), {
      error: atField('must be a date (YYYY-MM-DD) or an ISO 8601 time with its zone (2026-11-28T09:00:00Z)'),
    })
    // A day given as the end of the range includes that whole day.
    .transform((s) => new Date(Date.parse(s) + (end && day.test(s) ? 86_400_000 : 0)))

export const listInvoicesSchema = z.object({
  query: z
    .object({
      limit: z.coerce.number().int().min(1).max(MAX_LIST_LIMIT).default(20).describe('Invoices per page (1–100, default 20).'),
      before: z
        .string()
        .max(100)
        .regex(CURSOR, { error: atField('must be a next_before value from a previous page') })
        .transform((s) => {
          const m = CURSOR.exec(s)!
          return { created_at: new Date(Number(m[1])), id: m[2]! }
        })
        .optional()
        .describe('The `next_before` of the previous page: this page starts below it.'),
      number: z.string().trim().min(1).max(100).optional().describe('Part of the invoice number, any case.'),
      recipient: z.string().trim().min(1).max(254).optional().describe("Part of the recipient's name or e-mail (`to.name`, `to.email`), any case."),
      created_from: when(false).optional().describe('Created at or after this day (UTC) or time.'),
      created_to: when(true).optional().describe('Created before this time, or on or before this day (UTC).'),
      format: z.enum(FORMATS).optional().describe('Output format asked for (an invoice without one is `pdf`).'),
      kind: z.enum(['single', 'batch']).optional().describe('`single` (POST /invoice) or `batch` (a row of a batch); both by default.'),
      status: z.enum(['queued', 'rendering', 'done', 'failed']).optional(),
    })
    .refine((q) => !q.created_from || !q.created_to || q.created_from < q.created_to, { error: 'created_from must be before created_to' }),
})

export const cursorOf = (created: Date, id: string) => `${created.getTime()}_${id}`
