// POST /api/v1/einvoice/read (docs/einvoice-receiving.md): a received e-invoice as
// the raw body (UBL or CII XML, or a Factur-X / ZUGFeRD PDF) answered as this service's invoice
// request, what it states and the findings of the rules it declares (read-result.ts), or with
// ?output=pdf a readable PDF of what it states. Its body is read here, not by the JSON parser.
import Router from '@koa/router'
import type { Context } from 'koa'
import { accountOf, requireApiKey } from '../platform/http/auth.ts'
import { z } from 'zod'
import { tooMany, unsupportedMediaType } from '../platform/http/errors.ts'
import { input, validate } from '../platform/http/validate.ts'
import { readRawBody } from '../platform/http/raw-body.ts'
import { clock, monthKey } from '../platform/clock.ts'
import { INVOICE_LIMITS } from '../platform/plans.ts'
import type { Platform } from '../platform/platform.ts'
import { readInThread } from './receive/read-pool.ts'
import { QUOTA_MESSAGE } from './invoice-routes.ts'
import { LOCALES } from './model/einvoice-schema.ts'
import { sendPdf } from './pdf-response.ts'
import { reserve } from './store/quota-store.ts'

export const READ_PATH = '/api/v1/einvoice/read'
/** A Factur-X PDF with fonts and a logo is well under this; the XML alone far under. */
export const MAX_RECEIVED_BYTES = 10 * 1024 * 1024

/** ?output=json (default) or pdf, and the PDF's locale (else the document's, else English). */
const readQuerySchema = z.object({ query: z.object({ output: z.enum(['json', 'pdf']).optional(), locale: z.enum(LOCALES).optional() }) })

function bodyKind(ctx: Context): 'xml' | 'pdf' {
  const encoding = (ctx.get('content-encoding') || 'identity').toLowerCase()
  if (encoding !== 'identity') throw unsupportedMediaType('Unsupported content encoding: send the document uncompressed')
  if (ctx.is('application/pdf')) return 'pdf'
  if (ctx.is('application/xml', 'text/xml')) return 'xml'
  throw unsupportedMediaType('Content-Type must be application/xml or text/xml (UBL or CII) or application/pdf (Factur-X / ZUGFeRD)')
}

export function receiveRouter(platform: Platform): Router {
  const router = new Router()
  router.post(READ_PATH, requireApiKey(platform, 'invoice'), validate(readQuerySchema), async (ctx) => {
    const account = accountOf(ctx)
    const kind = bodyKind(ctx)
    const body = await readRawBody(ctx, MAX_RECEIVED_BYTES, `Request body too large (at most ${MAX_RECEIVED_BYTES} bytes)`)
    const { query } = input(ctx, readQuerySchema)
    // The readable PDF is rendered in the read's thread from what was read: every document that
    // reads renders (its findings on the page), whatever this service would need to write it.
    const { pdf, ...result } = await readInThread(body, kind, query.output === 'pdf' ? { pdf: { locale: query.locale } } : {})
    // Counted like a rendered invoice once the document was read; a refused one is not.
    const now = clock.now()
    const period = monthKey(now)
    if (!(await reserve(platform.db, account._id, period, INVOICE_LIMITS[account.plan].monthly_limit, 1))) {
      throw tooMany(QUOTA_MESSAGE, (Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1) - now.getTime()) / 1000)
    }
    if (pdf) return sendPdf(ctx, pdf, `received-${String(result.invoice.invoice_number ?? 'invoice').replace(/[^0-9A-Za-z._-]/g, '_')}.pdf`)
    ctx.set('Cache-Control', 'no-store')
    ctx.body = result
  })
  return router
}
