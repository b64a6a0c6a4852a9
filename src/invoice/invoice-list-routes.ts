// GET /invoices: the account's invoices (single ones and batch rows), newest first, filtered, a
// page at a time with a stable cursor (docs/invoice.md, "Listing invoices"). A row's PDF or
// e-invoice is GET /invoices/{id} while it is retained.
import Router from '@koa/router'
import { accountOf, requireApiKey } from '../platform/http/auth.ts'
import { describedAs } from '../platform/ops/openapi.ts'
import { input, validate } from '../platform/http/validate.ts'
import type { Platform } from '../platform/platform.ts'
import { cursorOf, listInvoicesSchema } from './invoice-list-schema.ts'
import { listInvoices, type InvoiceListRow } from './store/invoice-list.ts'

const str = (v: unknown) => (typeof v === 'string' ? v : null)

function itemOf(r: InvoiceListRow) {
  return {
    invoice_id: r._id,
    kind: r.kind,
    batch_id: r.batch_id ?? null,
    row: r.row ?? null,
    status: r.status,
    invoice_number: str(r.invoice_number),
    recipient: { name: str(r.recipient_name), email: str(r.recipient_email) },
    date: str(r.date),
    due_date: str(r.due_date),
    currency: str(r.currency),
    format: str(r.format) ?? 'pdf',
    size_bytes: r.size_bytes ?? null,
    error: r.error?.message ?? null,
    created_at: r.created_at.toISOString(),
    // Done invoices are served again until retention removes them (with this row).
    download_url: r.status === 'done' ? `/api/v1/invoices/${r._id}` : null,
  }
}

const ITEM_SCHEMA = {
  type: 'object',
  properties: {
    invoice_id: { type: 'string' },
    kind: { enum: ['single', 'batch'] },
    batch_id: { type: ['string', 'null'] },
    row: { type: ['integer', 'null'] },
    status: { enum: ['queued', 'rendering', 'done', 'failed'] },
    invoice_number: { type: ['string', 'null'] },
    recipient: { type: 'object', properties: { name: { type: ['string', 'null'] }, email: { type: ['string', 'null'] } } },
    date: { type: ['string', 'null'] },
    due_date: { type: ['string', 'null'] },
    currency: { type: ['string', 'null'] },
    format: { enum: ['pdf', 'facturx', 'xrechnung', 'ubl'] },
    size_bytes: { type: ['integer', 'null'] },
    error: { type: ['string', 'null'] },
    created_at: { type: 'string', format: 'date-time' },
    download_url: { type: ['string', 'null'] },
  },
}

export function invoiceListRouter(platform: Platform): Router {
  const router = new Router({ prefix: '/api/v1' })
  const auth = requireApiKey(platform, 'invoice')

  router.get(
    '/invoices',
    describedAs({
      summary: "The account's invoices, newest first",
      description:
        'Single invoices and batch rows, newest first by creation time (ties by id). Pages are stable: `next_before` of one page is the `before` of the next, and an invoice made meanwhile never shifts them; `next_before` is null on the last page. Demo invoices are not listed.',
      responses: {
        '200': {
          description: 'One page',
          content: { 'application/json': { schema: { type: 'object', properties: { invoices: { type: 'array', items: ITEM_SCHEMA }, next_before: { type: ['string', 'null'] } } } } },
        },
      },
    }),
    auth,
    validate(listInvoicesSchema),
    async (ctx) => {
      const { query } = input(ctx, listInvoicesSchema)
      const rows = await listInvoices(
        platform.db,
        {
          accountId: accountOf(ctx)._id,
          number: query.number,
          recipient: query.recipient,
          createdFrom: query.created_from,
          createdTo: query.created_to,
          format: query.format,
          kind: query.kind,
          status: query.status,
        },
        // One more than asked: whether a next page exists, without an empty last page.
        query.limit + 1,
        query.before,
      )
      const page = rows.slice(0, query.limit)
      const last = page.at(-1)
      ctx.set('Cache-Control', 'no-store')
      ctx.body = { invoices: page.map(itemOf), next_before: rows.length > query.limit && last ? cursorOf(last.created_at, last._id) : null }
    },
  )
  return router
}
