// Idempotency-Key for POST /invoice and POST /invoices/batch. The first request with a key claims
// it (a unique insert, so concurrent duplicates cannot both run); a repeat with the same body
// within 24 h gets the original result without being counted again; a different body → 409.
// Only successes are remembered: a failed request frees its key so the client can retry it.
import { createHash } from 'node:crypto'
import type { Context, Next } from 'koa'
import type { Db } from 'mongodb'
import { accountOf } from '../platform/http/auth.ts'
import { badRequest, conflict, notFound } from '../platform/http/errors.ts'
import { clock } from '../platform/clock.ts'
import { sha256 } from '../platform/ids.ts'
import { isDuplicateKey, type IndexSpec } from '../platform/store/mongo.ts'
import { partitioned } from '../platform/store/partitioned.ts'
import type { Platform } from '../platform/platform.ts'
import { sendInvoiceFile } from './pdf-response.ts'
import { invoices, pdfBytes } from './store/invoice-store.ts'

export const IDEMPOTENCY_TTL_MS = 24 * 3_600_000
const POLL_MS = 100

export type IdempotencyScope = 'invoice' | 'batch'
/** What a finished request left behind; the response is rebuilt from it on a repeat. */
export type IdempotentResult = { invoice_id: string } | { batch_id: string }

interface IdempotencyDoc {
  /** sha256(account, scope, key): the client's key is not stored as sent. */
  _id: string
  account_id: string
  scope: IdempotencyScope
  fingerprint: string
  state: 'pending' | 'done'
  result?: IdempotentResult
  created_at: Date
  expires_at: Date
}

export const idempotencyIndexes: IndexSpec = {
  collection: 'idempotency_keys',
  // One key per keyed request for 24 h: it grows with invoices, so it is spread like them
  // (docs/embedded-store.md); a key's slot is a function of its _id.
  partitions: 128,
  indexes: [{ key: { expires_at: 1 }, name: 'expires_at' }],
}

const allKeys = (db: Db) => partitioned<IdempotencyDoc>(db, 'idempotency_keys')
const keys = (db: Db, id: string) => allKeys(db).of(id)

export const KEY_MISMATCH = 'Idempotency-Key was already used with a different request body'
export const KEY_IN_PROGRESS = 'A request with this Idempotency-Key is still in progress; retry later'

/** JSON with object keys sorted, so that key order and whitespace do not change the fingerprint. */
export function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`
  if (v && typeof v === 'object') {
    const o = v as Record<string, unknown>
    return `{${Object.keys(o)
      .sort()
      .filter((k) => o[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`)
      .join(',')}}`
  }
  return JSON.stringify(v) ?? 'null'
}

export const fingerprint = (v: unknown) => createHash('sha256').update(canonicalJson(v)).digest('hex')

export function readKey(ctx: Context): string | null {
  const key = ctx.get('idempotency-key')
  if (!key) return null
  if (!/^[\x21-\x7e]{1,255}$/.test(key)) throw badRequest('Idempotency-Key must be 1 to 255 visible ASCII characters')
  return key
}

export interface IdempotencyOptions {
  scope: IdempotencyScope
  /** The request as the fingerprint sees it (the parsed body, plus anything else that changes the result). */
  request(ctx: Context): unknown
  /** Answer a repeat from the original result. */
  replay(ctx: Context, result: IdempotentResult): Promise<void>
  /** A pending claim older than this is taken to be from a crashed request and taken over. */
  staleMs: number
}

/**
 * Middleware, after auth and validation. The handler reports its result in
 * ctx.state.idempotentResult; it is stored only for a 2xx answer.
 */
export function idempotency(platform: Platform, opts: IdempotencyOptions) {
  const db = platform.db
  return async (ctx: Context, next: Next) => {
    const key = readKey(ctx)
    if (!key) return next()
    const account = accountOf(ctx)
    const _id = sha256(`${account._id}\u0000${opts.scope}\u0000${key}`)
    const fp = fingerprint(opts.request(ctx))
    const waitUntil = Date.now() + opts.staleMs

    for (;;) {
      const now = clock.now()
      try {
        await keys(db, _id).insertOne({ _id, account_id: account._id, scope: opts.scope, fingerprint: fp, state: 'pending', created_at: now, expires_at: new Date(now.getTime() + IDEMPOTENCY_TTL_MS) })
        break // claimed: this request does the work
      } catch (err) {
        if (!isDuplicateKey(err)) throw err
      }
      const doc = await keys(db, _id).findOne({ _id })
      if (!doc) continue // removed meanwhile: claim again
      const stale = doc.state === 'pending' && now.getTime() - doc.created_at.getTime() > opts.staleMs
      if (doc.expires_at <= now || stale) {
        await keys(db, _id).deleteOne({ _id, created_at: doc.created_at })
        continue
      }
      if (doc.fingerprint !== fp) throw conflict(KEY_MISMATCH)
      if (doc.state === 'done' && doc.result) {
        ctx.set('Idempotent-Replayed', 'true')
        return opts.replay(ctx, doc.result)
      }
      // The original is still running: wait for its result rather than run twice.
      if (Date.now() >= waitUntil) throw conflict(KEY_IN_PROGRESS)
      await new Promise((r) => setTimeout(r, POLL_MS))
    }

    try {
      await next()
    } catch (err) {
      await keys(db, _id).deleteOne({ _id, state: 'pending' })
      throw err
    }
    const result = ctx.state.idempotentResult as IdempotentResult | undefined
    if (ctx.status >= 200 && ctx.status < 300 && result) {
      await keys(db, _id).updateOne({ _id }, { $set: { state: 'done', result } })
    } else {
      await keys(db, _id).deleteOne({ _id, state: 'pending' })
    }
  }
}

export async function deleteExpiredKeys(db: Db, now: Date): Promise<number> {
  return allKeys(db).deleteMany({ expires_at: { $lt: now } })
}

/** The Idempotency-Key middleware of POST /invoice: a repeat gets the stored PDF again. */
export function invoiceIdempotency(platform: Platform) {
  return idempotency(platform, {
    scope: 'invoice',
    staleMs: Math.max(60_000, 2 * platform.config.RENDER_TIMEOUT_MS),
    request: (ctx) => (ctx.request as { body?: unknown }).body ?? null,
    async replay(ctx, result) {
      const doc = 'invoice_id' in result ? await invoices(platform.db, result.invoice_id).findOne({ _id: result.invoice_id, account_id: accountOf(ctx)._id }) : null
      if (!doc || doc.status !== 'done' || !doc.pdf) throw notFound('The invoice created with this Idempotency-Key is no longer stored')
      sendInvoiceFile(ctx, pdfBytes(doc), (doc.request as { format?: string } | undefined)?.format, 'invoice')
      ctx.set('X-Invoice-Id', doc._id)
    },
  })
}
