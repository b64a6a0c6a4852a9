// Request schemas of the batch API, beside batch-routes.ts. Rows are checked with the very schema
// POST /invoice uses, and every problem of every row is reported (`rows[17].items[0].quantity
// must be > 0`), so a client can fix a file in one pass.
import net from 'node:net'
import { z } from 'zod'
import { badRequest } from '../platform/http/errors.ts'
import { atField, parseAll } from '../platform/http/validate.ts'
import { checkUrlShape, isPublicAddress, OutboundError } from '../platform/outbound/safe-fetch.ts'
import { invoiceBodySchema, storedId, type InvoiceRequest } from './invoice-schema.ts'

export const MAX_BATCH_ROWS = 1_000
/** Problems listed in a 400 (the first is also the `error` message). */
const MAX_REPORTED = 100

export const batchIdSchema = z.object({ params: z.object({ id: storedId }) })
/** `<created_at in ms>_<batch id>`: the last batch of a page (GET /invoices/batch). */
const BATCH_CURSOR = /^(\d{1,15})_([0-9A-Za-z]{1,64})$/
export const listBatchesSchema = z.object({
  query: z.object({
    limit: z.coerce.number().int().min(1).max(100).default(20).describe('Batches per page (1–100, default 20).'),
    before: z
      .string()
      .max(100)
      .regex(BATCH_CURSOR, { error: atField('must be a next_before value from a previous page') })
      .transform((s) => {
        const m = BATCH_CURSOR.exec(s)!
        return { created_at: new Date(Number(m[1])), id: m[2]! }
      })
      .optional()
      .describe('The `next_before` of the previous page.'),
    status: z.enum(['processing', 'finished']).optional(),
  }),
})
export const createBatchQuerySchema = z.object({
  query: z.object({ callback_url: z.string().max(2_048).optional() }).loose(),
})

/** Callback URL: shape checked now; every address it resolves to is checked again at delivery. */
export function checkCallbackUrl(raw: string, allowPrivate: boolean): string {
  let url: URL
  try {
    url = checkUrlShape(raw)
  } catch (err) {
    throw badRequest(`callback_url: ${err instanceof OutboundError ? err.message : 'URL is not valid'}`)
  }
  const host = url.hostname.replace(/^\[|\]$/g, '')
  if (!allowPrivate && (host === 'localhost' || (net.isIP(host) && !isPublicAddress(host)))) {
    throw badRequest('callback_url: private, loopback and link-local addresses are not allowed')
  }
  return url.href
}

/** Validate every row; throw one 400 listing the problems of all rows. */
export function validateRows(rows: unknown[]): InvoiceRequest[] {
  if (rows.length === 0) throw badRequest('a batch must contain at least one invoice')
  if (rows.length > MAX_BATCH_ROWS) throw badRequest(`a batch may contain at most ${MAX_BATCH_ROWS} invoices (got ${rows.length})`)
  const out: InvoiceRequest[] = []
  const errors: string[] = []
  let badRows = 0
  rows.forEach((row, i) => {
    const r = parseAll(invoiceBodySchema, row, ['rows', i])
    if (r.ok) return void out.push(r.data)
    badRows++
    // Messages written in the schema (the seeded items message) carry no path: add the row.
    for (const m of r.errors) errors.push(m.startsWith('rows[') ? m : `rows[${i}]: ${m}`)
  })
  if (errors.length) {
    const more = errors.length > 1 ? ` (${errors.length} problems in ${badRows} row${badRows === 1 ? '' : 's'}; see errors)` : ''
    throw badRequest(errors[0]! + more, { errors: errors.slice(0, MAX_REPORTED), invalid_rows: badRows })
  }
  return out
}
