// Compressed request bodies (Content-Encoding: gzip, deflate, br). The JSON parser inflates them
// (co-body, through zlib); routes that read their own bytes and interpret them (OFREP, the Stripe
// webhook) do the same here. A body that is not what its header says is the client's
// mistake: a 400 naming the encoding, never the 500 a raw zlib error would become.
import type { Context } from 'koa'
import { createBrotliDecompress, createUnzip } from 'node:zlib'
import getRawBody from 'raw-body'
import { HttpError } from './errors.ts'

const COMPRESSED = new Set(['gzip', 'deflate', 'br'])

/** The request's compression, when it names one we inflate. */
function compression(ctx: Context): string | undefined {
  const enc = ctx.get('content-encoding').trim().toLowerCase()
  return COMPRESSED.has(enc) ? enc : undefined
}

/** zlib's stream errors carry a numeric errno and a Z_… (gzip, deflate) or ERR_… (brotli) code. */
function isZlibError(err: unknown): boolean {
  const e = err as { errno?: unknown; code?: unknown; status?: unknown } | null
  return typeof e?.errno === 'number' && typeof e.code === 'string' && /^(Z_|ERR_)/.test(e.code) && e.status === undefined
}

export const invalidEncoding = (enc: string) => new HttpError(400, `Body is not valid ${enc} (Content-Encoding: ${enc})`)

/** A body-reading error as the client should see it: a corrupt compressed body is a 400. */
export function bodyReadError(ctx: Context, err: unknown): unknown {
  const enc = compression(ctx)
  return enc && isZlibError(err) ? invalidEncoding(enc) : err
}

/**
 * The body's bytes after undoing its Content-Encoding, at most maxBytes of them once inflated (a
 * small bomb is refused like a large body: 413). Unknown encodings → 415.
 */
export async function readDecodedBody(ctx: Context, maxBytes: number, tooLargeMessage = 'Request body too large'): Promise<Buffer> {
  const enc = compression(ctx)
  const named = ctx.get('content-encoding').trim().toLowerCase()
  if (!enc && named !== '' && named !== 'identity') throw new HttpError(415, 'Unsupported content encoding')
  // createUnzip reads gzip and zlib-wrapped deflate alike, as the JSON parser's inflation does.
  const stream = enc ? ctx.req.pipe(enc === 'br' ? createBrotliDecompress() : createUnzip()) : ctx.req
  const declared = ctx.get('content-length')
  try {
    return await getRawBody(stream, { limit: maxBytes, length: !enc && /^\d+$/.test(declared) ? Number(declared) : undefined })
  } catch (err) {
    if ((err as { type?: string }).type === 'entity.too.large') {
      ctx.req.unpipe()
      ctx.req.resume()
      throw new HttpError(413, tooLargeMessage)
    }
    throw bodyReadError(ctx, err)
  }
}
