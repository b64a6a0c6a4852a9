// The invoice API (README.md, "Invoice generation"; docs/invoice.md): signup, invoice, usage,
// demo-invoice, subscribe, and GET /invoices/{id} (a stored invoice, e.g. a batch row's).
import Router from '@koa/router'
import { createAccount, signupSchema } from '../platform/accounts.ts'
import { accountOf, requireApiKey } from '../platform/http/auth.ts'
import { HttpError, notFound, tooMany, unavailable } from '../platform/http/errors.ts'
import { createLimiter } from '../platform/http/rate-limit.ts'
import { input, validate } from '../platform/http/validate.ts'
import { clock, monthKey } from '../platform/clock.ts'
import { INVOICE_LIMITS } from '../platform/plans.ts'
import { randomId } from '../platform/ids.ts'
import { enqueueAwaited } from '../platform/queue/job.ts'
import type { Platform } from '../platform/platform.ts'
import { admitRender, awaitInvoicePdf, listenForRender } from './await-invoice.ts'
import { invoiceRenderContract } from './job-contracts.ts'
import { cancelHold, confirmHold, used } from './store/quota-store.ts'
import { holdConfirmations } from './store/hold-confirmations.ts'
import { demoInvoiceSchema, invoiceIdSchema, invoiceSchema, subscribeSchema, type InvoiceRequest } from './invoice-schema.ts'
import { insertInvoice, invoices, markFailed, type InvoiceKind } from './store/invoice-store.ts'
import { storedPdf } from './store/pdf-store.ts'
import { subscribe } from './store/subscriber-store.ts'
import { invoiceIdempotency } from './idempotency.ts'
import { sendInvoiceFile } from './pdf-response.ts'

export const QUOTA_MESSAGE = 'Monthly limit reached. Upgrade your plan to continue.'
export const DEMO_RATE_MESSAGE = 'Rate limit exceeded. Maximum 5 demo requests per minute.'

/** Who pays for a render: the account's hold on one unit, taken at `reservedAtMs` (clock.nowMs). */
export interface RenderCharge {
  accountId: string
  period: string
  reservedAtMs: number
}

/**
 * Store, enqueue, wait. On an enqueue failure (Redis down) the invoice fails and is not charged.
 * With a charge, `id` is the hold's id (reserved by the caller with holdConfirmations().reserve).
 */
export async function renderNow(platform: Platform, kind: InvoiceKind, charge: RenderCharge | null, request: InvoiceRequest, id = randomId()): Promise<Buffer> {
  const now = clock.now()
  try {
    await insertInvoice(platform.db, {
      _id: id,
      account_id: charge?.accountId ?? null,
      kind,
      request,
      period: charge?.period ?? null,
      charged: charge !== null,
      created_at: now,
      expires_at: new Date(now.getTime() + (kind === 'demo' ? 3_600_000 : 30 * 86_400_000)),
    })
    if (charge) await confirmRecorded(platform, charge, id)
  } catch (err) {
    // Not recorded, so nothing else will give the reserved unit back (once: only if still held).
    if (charge) await cancelHold(platform.db, charge.accountId, charge.period, id)
    throw err
  }
  const settled = listenForRender(platform, id, platform.config.RENDER_TIMEOUT_MS)
  try {
    await enqueueAwaited(platform, invoiceRenderContract, { invoice_id: id, request })
  } catch {
    await markFailed(platform.db, id, { status: 503, message: 'Service temporarily unavailable, please retry' })
    throw unavailable()
  }
  return awaitInvoicePdf(platform, id, platform.config.RENDER_TIMEOUT_MS, settled)
}

/**
 * The invoice is recorded: its unit stops being a hold. Usually deferred to the counter's next
 * reservation (hold-confirmations.ts): the sweep of stale holds keeps a recorded invoice's unit
 * charged. Not when recording took so long that the sweep (cutoff: render timeout + two job
 * locks) may have looked before it: then confirmed now, and if the sweep took the hold (the unit
 * is back already), undone.
 */
async function confirmRecorded(platform: Platform, charge: RenderCharge, id: string): Promise<void> {
  const { RENDER_TIMEOUT_MS, JOB_LOCK_MS } = platform.config
  if (clock.nowMs() - charge.reservedAtMs < (RENDER_TIMEOUT_MS + 2 * JOB_LOCK_MS) / 2) {
    holdConfirmations(platform).later(charge.accountId, charge.period, id)
    return
  }
  if (!(await confirmHold(platform.db, charge.accountId, charge.period, id))) {
    await invoices(platform.db, id).deleteOne({ _id: id })
    throw unavailable()
  }
}

export function invoiceRouter(platform: Platform): Router {
  const router = new Router({ prefix: '/api/v1' })
  const auth = requireApiKey(platform, 'invoice')
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
    const reservedAtMs = clock.nowMs()
    if (!(await holdConfirmations(platform).reserve(account._id, period, limit, { id, kind: 'invoice' }))) throw tooMany(QUOTA_MESSAGE, secondsToNextMonth())
    const pdf = await renderNow(platform, 'single', { accountId: account._id, period, reservedAtMs }, body, id)
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

function secondsToNextMonth(): number {
  const now = clock.now()
  return (Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1) - now.getTime()) / 1000
}
