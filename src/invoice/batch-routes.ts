// The bulk API (docs/bulk.md): POST /invoices/batch, GET /invoices/batch (the account's batches),
// GET /invoices/batch/{id} and GET /invoices/batch/{id}/archive (a row's invoice is GET /invoices/{id}, in invoice-routes.ts).
// A batch is accepted only whole: every row
// valid and the quota for all of them reserved at once; its rows are then rendered in chunks by
// the invoice-batch-render queue, beside (never ahead of) single invoices' renders.
import Router from '@koa/router'
import type { Context, Middleware, Next } from 'koa'
import { clock, monthKey } from '../platform/clock.ts'
import { INVOICE_LIMITS } from '../platform/plans.ts'
import { accountOf, requireApiKey } from '../platform/http/auth.ts'
import { HttpError, notFound, unavailable } from '../platform/http/errors.ts'
import { input, validate } from '../platform/http/validate.ts'
import { describedAs } from '../platform/ops/openapi.ts'
import { randomId } from '../platform/ids.ts'
import { logger } from '../platform/logger.ts'
import { enqueueDurably } from '../platform/queue/outbox.ts'
import type { Platform } from '../platform/platform.ts'
import { batchArchive } from './batch/archive.ts'
import { bodyFormat, readBodyText, splitRows } from './batch/batch-body.ts'
import { advanceBatch, enqueueRows } from './batch/batch-progress.ts'
import { batchIdSchema, checkCallbackUrl, createBatchQuerySchema, listBatchesSchema, validateRows } from './batch-schema.ts'
import { batches, countRows, getBatch, insertBatch, listBatches, rowCounts, rowStates, type BatchDoc } from './batch/batch-store.ts'
import { newCallbackSecret } from './batch/batch-callback.ts'
import { idempotency, type IdempotentResult } from './idempotency.ts'
import { invoiceBatchWatchContract } from './job-contracts.ts'
import { cancelHold, confirmHold, reserve, used } from './store/quota-store.ts'
import type { InvoiceRequest } from './invoice-schema.ts'
import { batchRowId } from './store/slot-key.ts'
import { invoices } from './store/invoice-store.ts'

export const BATCH_PATH = '/api/v1/invoices/batch'

function publicBase(platform: Platform, ctx: Context): string {
  return `${(platform.config.INVOICE_PUBLIC_URL ?? `${ctx.protocol}://${ctx.host}`).replace(/\/+$/, '')}/api/v1`
}

function quotaError(needed: number, remaining: number, limit: number): HttpError {
  const now = clock.now()
  const retry = (Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1) - now.getTime()) / 1000
  return new HttpError(
    429,
    `Monthly limit reached: this batch needs ${needed} invoice${needed === 1 ? '' : 's'} but only ${remaining} remain${remaining === 1 ? 's' : ''} this month (limit ${limit}). Upgrade your plan to continue.`,
    { 'Retry-After': String(Math.max(1, Math.ceil(retry))) },
    { remaining, requested: needed },
  )
}

/** The 202 answer; rebuilt from the batch for an idempotent repeat. */
function accepted(batch: BatchDoc) {
  return {
    batch_id: batch._id,
    status: batch.status,
    total: batch.total,
    status_url: batch.status_url,
    archive_url: batch.archive_url,
    ...(batch.callback ? { callback_url: batch.callback.url, callback_secret: batch.callback.secret } : {}),
  }
}

/** Parse and validate the whole body before anything is reserved or stored. */
function readRows(): Middleware {
  return async (ctx: Context, next: Next) => {
    const format = bodyFormat(ctx)
    ctx.state.batchRows = validateRows(splitRows(await readBodyText(ctx), format))
    await next()
  }
}

async function createBatch(platform: Platform, ctx: Context, requests: InvoiceRequest[], callbackUrl: string | undefined): Promise<BatchDoc> {
  const { db } = platform
  const account = accountOf(ctx)
  const period = monthKey(clock.now())
  const limit = INVOICE_LIMITS[account.plan].monthly_limit
  const n = requests.length
  const id = randomId()
  if (!(await reserve(db, account._id, period, limit, n, { id, kind: 'batch' }))) {
    throw quotaError(n, Math.max(0, limit - (await used(db, account._id, period))), limit)
  }
  const now = clock.now()
  const base = publicBase(platform, ctx)
  const batch: Omit<BatchDoc, 'updated_at' | 'status' | 'enqueued'> = {
    _id: id,
    account_id: account._id,
    total: n,
    period,
    status_url: `${base}/invoices/batch/${id}`,
    archive_url: `${base}/invoices/batch/${id}/archive`,
    ...(callbackUrl ? { callback: { url: callbackUrl, secret: newCallbackSecret(), state: 'pending' as const, enqueued: false, attempts: 0 } } : {}),
    created_at: now,
  }
  const expires = new Date(now.getTime() + platform.config.INVOICE_RETENTION_DAYS * 86_400_000)
  try {
    await insertBatch(db, batch)
    await invoices(db, id).insertMany(
      requests.map((request, row) => ({
        _id: batchRowId(id),
        account_id: account._id,
        kind: 'batch' as const,
        batch_id: id,
        row,
        status: 'queued' as const,
        request,
        period,
        charged: true,
        created_at: now,
        updated_at: now,
        expires_at: expires,
      })),
    )
    // The watcher is what finishes the batch: it must survive a Redis outage, so it goes
    // through the outbox. With it recorded, the batch is safe: the rows below are a fast path.
    await enqueueDurably(platform, invoiceBatchWatchContract, { batch_id: id })
    // Recorded whole: the units stop being a hold. If the sweep of a dead process's holds took
    // it (this request was slower than its cutoff), the units are back already: undo.
    if (!(await confirmHold(db, account._id, period, id))) throw unavailable()
  } catch (err) {
    // Nothing was promised yet: undo, and give every unit back (once: only if still held).
    await invoices(db, id).deleteMany({ batch_id: id }).catch(() => undefined)
    await batches(db).deleteOne({ _id: id }).catch(() => undefined)
    await cancelHold(db, account._id, period, id)
    throw err
  }
  try {
    await enqueueRows(platform, id)
  } catch (err) {
    logger.warn({ batchId: id, err: (err as Error).message }, 'batch rows not enqueued; the watcher will retry')
  }
  return { ...batch, status: 'processing', enqueued: true, updated_at: now }
}

/** The bulk API: POST /invoices/batch, its status and its archive. */
export function batchRouter(platform: Platform): Router {
  const router = new Router({ prefix: '/api/v1' })
  const auth = requireApiKey(platform, 'invoice')
  const staleMs = Math.max(60_000, 2 * platform.config.RENDER_TIMEOUT_MS)

  router.post(
    '/invoices/batch',
    auth,
    validate(createBatchQuerySchema),
    async (ctx, next) => {
      const raw = input(ctx, createBatchQuerySchema).query.callback_url
      ctx.state.callbackUrl = raw === undefined ? undefined : checkCallbackUrl(raw, platform.config.outboundAllowPrivate)
      await next()
    },
    readRows(),
    idempotency(platform, {
      scope: 'batch',
      staleMs,
      request: (ctx) => ({ rows: ctx.state.batchRows, callback_url: ctx.state.callbackUrl ?? null }),
      async replay(ctx, result: IdempotentResult) {
        const batch = 'batch_id' in result ? await getBatch(platform.db, result.batch_id, accountOf(ctx)._id) : null
        if (!batch) throw notFound('The batch created with this Idempotency-Key is no longer stored')
        ctx.status = 202
        ctx.set('Location', batch.status_url)
        ctx.body = accepted(batch)
      },
    }),
    async (ctx) => {
      const batch = await createBatch(platform, ctx, ctx.state.batchRows, ctx.state.callbackUrl)
      ctx.state.idempotentResult = { batch_id: batch._id }
      ctx.status = 202
      ctx.set('Location', batch.status_url)
      ctx.body = accepted(batch)
    },
  )

  // Listed with their progress; the rows of one are GET /invoices/batch/{id}. Registered before
  // GET /invoices/{id} (app.ts), which would take "batch" for an invoice id.
  router.get('/invoices/batch', describedAs({ summary: "The account's batches, newest first, with their progress" }), auth, validate(listBatchesSchema), async (ctx) => {
    const { query } = input(ctx, listBatchesSchema)
    const docs = await listBatches(platform.db, accountOf(ctx)._id, { limit: query.limit + 1, before: query.before, status: query.status })
    const page = docs.slice(0, query.limit)
    // Finished batches carry their final counts; the rows of one still processing are counted (one query in its slot).
    const counts = await Promise.all(page.map((b) => (b.status === 'finished' && b.counts ? b.counts : rowCounts(platform.db, b._id))))
    const last = page.at(-1)
    ctx.set('Cache-Control', 'no-store')
    ctx.body = {
      batches: page.map((b, i) => ({
        batch_id: b._id,
        status: b.status,
        total: b.total,
        counts: counts[i],
        created_at: b.created_at.toISOString(),
        finished_at: b.finished_at?.toISOString() ?? null,
        status_url: b.status_url,
        archive_url: b.status === 'finished' ? b.archive_url : null,
        callback: b.callback ? { url: b.callback.url, state: b.callback.state } : null,
      })),
      next_before: docs.length > query.limit && last ? `${last.created_at.getTime()}_${last._id}` : null,
    }
  })

  router.get('/invoices/batch/:id', auth, validate(batchIdSchema), async (ctx) => {
    const { params } = input(ctx, batchIdSchema)
    const account = accountOf(ctx)
    let batch = await getBatch(platform.db, params.id, account._id)
    if (!batch) throw notFound('Batch not found')
    const rows = await rowStates(platform.db, batch._id)
    const counts = countRows(rows)
    // Finish on read too, so a status poll never shows "processing" with nothing left to do.
    if (batch.status === 'processing' && counts.queued + counts.rendering === 0) {
      await advanceBatch(platform, batch._id, { repair: false })
      batch = (await getBatch(platform.db, batch._id, account._id)) ?? batch
    }
    ctx.set('Cache-Control', 'no-store')
    ctx.body = {
      batch_id: batch._id,
      status: batch.status,
      total: batch.total,
      counts,
      created_at: batch.created_at.toISOString(),
      finished_at: batch.finished_at?.toISOString() ?? null,
      status_url: batch.status_url,
      archive_url: batch.archive_url,
      callback: batch.callback
        ? {
            url: batch.callback.url,
            state: batch.callback.state,
            attempts: batch.callback.attempts,
            last_status: batch.callback.last_status ?? null,
            last_error: batch.callback.last_error ?? null,
          }
        : null,
      rows: rows.map((r) => ({ row: r.row, invoice_id: r.invoice_id, state: r.state, error: r.error?.message ?? null })),
    }
  })

  router.get('/invoices/batch/:id/archive', auth, validate(batchIdSchema), async (ctx) => {
    const { params } = input(ctx, batchIdSchema)
    const batch = await getBatch(platform.db, params.id, accountOf(ctx)._id)
    if (!batch) throw notFound('Batch not found')
    if (batch.status !== 'finished') {
      const c = await rowCounts(platform.db, batch._id)
      throw new HttpError(409, `Batch is not finished yet (${c.done + c.failed} of ${batch.total} rows finished); download the archive once its status is "finished"`, {}, { status: batch.status })
    }
    const rows = await rowStates(platform.db, batch._id)
    ctx.status = 200
    ctx.type = 'application/zip'
    ctx.set('Content-Disposition', `attachment; filename="batch-${batch._id}.zip"`)
    ctx.set('Cache-Control', 'no-store')
    ctx.body = batchArchive(platform.db, rows, batch.finished_at ?? batch.created_at)
  })
  return router
}
