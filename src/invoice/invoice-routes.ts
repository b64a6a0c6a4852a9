// The invoice API (README.md, "Invoice generation"; docs/invoice.md): signup, invoice, invoice
// preview, usage, demo-invoice, subscribe, and GET /invoices/{id} (a stored invoice, e.g. a batch row's).
import Router from '@koa/router'
import { createAccount, signupSchema } from '../platform/accounts.ts'
import { accountOf, requireApiKey } from '../platform/http/auth.ts'
import { HttpError, notFound, tooMany, unavailable } from '../platform/http/errors.ts'
import { createLimiter } from '../platform/http/rate-limit.ts'
import { input, validate } from '../platform/http/validate.ts'
import { describedAs } from '../platform/ops/openapi.ts'
import { clock, monthKey } from '../platform/clock.ts'
import { INVOICE_LIMITS } from '../platform/plans.ts'
import { randomId } from '../platform/ids.ts'
import { enqueueAwaited } from '../platform/queue/job.ts'
import type { Platform } from '../platform/platform.ts'
import { admitRender, awaitInvoicePdf, giveUp, listenForRender } from './await-invoice.ts'
import { invoiceRenderContract } from './job-contracts.ts'
import { used } from './store/quota-store.ts'
import { holdConfirmations } from './store/hold-confirmations.ts'
import { demoInvoiceSchema, invoiceIdSchema, invoiceSchema, subscribeSchema, type InvoiceRequest } from './invoice-schema.ts'
import { invoices, type InvoiceRecord } from './store/invoice-store.ts'
import { storedPdf } from './store/pdf-store.ts'
import { subscribe } from './store/subscriber-store.ts'
import { invoiceIdempotency } from './idempotency.ts'
import { sendInvoiceFile } from './pdf-response.ts'

export const QUOTA_MESSAGE = 'Monthly limit reached. Upgrade your plan to continue.'
export const DEMO_RATE_MESSAGE = 'Rate limit exceeded. Maximum 5 demo requests per minute.'
export const PREVIEW_PER_MINUTE = 60
export const PREVIEW_RATE_MESSAGE = `Preview rate limit exceeded. Maximum ${PREVIEW_PER_MINUTE} previews per minute.`

/** Who pays for a render: the account's hold on one unit of `period`, whose id is the invoice's. */
export interface RenderCharge {
  accountId: string
  period: string
}

/**
 * Enqueue, wait, answer: nothing is stored before the render. The worker records the invoice with
 * its PDF and hands the PDF back with its wake; until then only the account's hold (taken by the
 * caller with holdConfirmations().reserve, `id` being the hold's id) says the unit is in use
 * (docs/architecture.md, "A single invoice, recorded once"). On an enqueue failure (Redis down)
 * the invoice is recorded failed and its unit given back.
 */
export async function renderNow(platform: Platform, kind: InvoiceRecord['kind'], charge: RenderCharge | null, request: InvoiceRequest, id = randomId()): Promise<Buffer> {
  const rec: InvoiceRecord = { _id: id, account_id: charge?.accountId ?? null, kind, period: charge?.period ?? null, created_at: clock.now(), request }
  const payload = {
    invoice_id: id,
    request,
    record: { account_id: rec.account_id, kind, period: rec.period, created_at: rec.created_at.toISOString() },
  }
  const settled = listenForRender(platform, id, platform.config.RENDER_TIMEOUT_MS)
  try {
    await enqueueAwaited(platform, invoiceRenderContract, payload)
  } catch {
    // The add may have reached Redis although its answer did not: the record decides. If even that
    // write fails (MongoDB down too), 503 all the same: the sweep settles the hold.
    if (await giveUp(platform, rec, { status: 503, message: 'Service temporarily unavailable, please retry' }).catch(() => true)) throw unavailable()
  }
  return awaitInvoicePdf(platform, rec, payload, platform.config.RENDER_TIMEOUT_MS, settled)
}

export function invoiceRouter(platform: Platform): Router {
  const router = new Router({ prefix: '/api/v1' })
  const auth = requireApiKey(platform, 'invoice')
  const previewLimiter = createLimiter(platform.redis, { name: 'invoice-preview', namespace: platform.config.QUEUE_PREFIX, points: PREVIEW_PER_MINUTE, durationSec: 60, message: PREVIEW_RATE_MESSAGE })
  const demoLimiter = createLimiter(platform.redis, { name: 'demo-invoice', namespace: platform.config.QUEUE_PREFIX, points: 5, durationSec: 60, message: DEMO_RATE_MESSAGE })

  router.post('/signup', validate(signupSchema), async (ctx) => {
    const { body } = input(ctx, signupSchema)
    const { account, apiKey } = await createAccount(platform.db, 'invoice', body.email)
    ctx.body = { api_key: apiKey, plan: account.plan, monthly_limit: INVOICE_LIMITS[account.plan].monthly_limit }
  })

  router.post('/invoice', auth, validate(invoiceSchema), invoiceIdempotency(platform), async (ctx) => {
    const account = accountOf(ctx)
    const { body } = input(ctx, invoiceSchema)
    const period = monthKey(clock.now())
    const limit = INVOICE_LIMITS[account.plan].monthly_limit
    await admitRender(platform)
    const id = randomId()
    if (!(await holdConfirmations(platform).reserve(account._id, period, limit, { id, kind: 'invoice' }))) throw tooMany(QUOTA_MESSAGE, secondsToNextMonth())
    const pdf = await renderNow(platform, 'single', { accountId: account._id, period }, body, id)
    ctx.state.idempotentResult = { invoice_id: id } // remembered for an Idempotency-Key
    ctx.set('X-Invoice-Id', id) // GET /invoices/{id} serves it again
    sendInvoiceFile(ctx, pdf, body.format, 'invoice')
  })

  router.get('/usage', auth, async (ctx) => {
    const account = accountOf(ctx)
    const limit = INVOICE_LIMITS[account.plan].monthly_limit
    const count = await used(platform.db, account._id, monthKey(clock.now()))
    ctx.body = { plan: account.plan, invoices_this_month: count, monthly_limit: limit, remaining: Math.max(0, limit - count) }
  })

  router.post('/demo-invoice', async (ctx, next) => {
    await demoLimiter.take(ctx.ip)
    return next()
  }, validate(demoInvoiceSchema), async (ctx) => {
    const { body } = input(ctx, demoInvoiceSchema)
    await admitRender(platform)
    const pdf = await renderNow(platform, 'demo', null, body)
    sendInvoiceFile(ctx, pdf, body.format, 'demo')
  })

  // A console's live preview re-renders as its user types: through POST /invoice each keystroke
  // pause would spend a unit of the month's quota (5 on the free plan). A preview is rendered as a
  // demo is — recorded for an hour under no account, so neither counted nor listed — and limited
  // per account instead (docs/invoice.md, "Console support").
  router.post('/invoice/preview', describedAs(PREVIEW_OPENAPI), auth, async (ctx, next) => {
    await previewLimiter.take(accountOf(ctx)._id)
    return next()
  }, validate(invoiceSchema), async (ctx) => {
    const { body } = input(ctx, invoiceSchema)
    await admitRender(platform)
    const pdf = await renderNow(platform, 'demo', null, body)
    sendInvoiceFile(ctx, pdf, body.format, 'preview')
    // Shown in the page, not saved: the console displays it beside the form.
    ctx.set('Content-Disposition', ctx.response.get('Content-Disposition').replace(/^attachment/, 'inline'))
  })

  router.post('/subscribe', validate(subscribeSchema), async (ctx) => {
    const { body } = input(ctx, subscribeSchema)
    await subscribe(platform.db, body.email)
    ctx.body = { message: 'Subscribed. Thanks for signing up for the newsletter!' }
  })

  router.get('/invoices/:id', auth, validate(invoiceIdSchema), async (ctx) => {
    const { params } = input(ctx, invoiceIdSchema)
    const doc = await invoices(platform.db, params.id).findOne({ _id: params.id, account_id: accountOf(ctx)._id })
    if (!doc) throw notFound('Invoice not found')
    if (doc.status === 'done') {
      const pdf = await storedPdf(platform.db, doc)
      if (!pdf) throw notFound('Invoice is no longer stored')
      return sendInvoiceFile(ctx, pdf, (doc.request as { format?: string } | undefined)?.format, `invoice-${doc._id}`)
    }
    if (doc.status === 'failed') throw new HttpError(409, `Invoice could not be rendered: ${doc.error?.message ?? 'unknown error'}`, {}, { state: doc.status })
    throw new HttpError(409, `Invoice is not ready yet (state: ${doc.status})`, { 'Retry-After': '1' }, { state: doc.status })
  })
  return router
}

const PREVIEW_OPENAPI = {
  summary: 'Render an invoice without counting or listing it (a live preview)',
  description: `The body and answers of POST /invoice, but nothing is charged to the month's quota and the invoice is not listed (it is kept an hour under no account, as a demo invoice is); ${PREVIEW_PER_MINUTE} per minute per account (then 429 with Retry-After).`,
}

function secondsToNextMonth(): number {
  const now = clock.now()
  return (Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1) - now.getTime()) / 1000
}
