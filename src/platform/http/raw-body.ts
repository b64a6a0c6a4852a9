// Bodies a route reads itself instead of through the JSON parser (captures, signed webhooks,
// NDJSON batches, OFREP): raw bytes with a size cap. Past the cap → 413, and the rest of the
// request is drained so the client sees that answer instead of a connection reset.
import type { Context } from 'koa'
import getRawBody from 'raw-body'
import { HttpError } from './errors.ts'

export async function readRawBody(ctx: Context, maxBytes: number, tooLargeMessage = 'Request body too large'): Promise<Buffer> {
  const declared = ctx.get('content-length')
  try {
    return await getRawBody(ctx.req, { limit: maxBytes, length: /^\d+$/.test(declared) ? Number(declared) : undefined })
  } catch (err) {
    if ((err as { type?: string }).type === 'entity.too.large') {
      ctx.req.resume()
      throw new HttpError(413, tooLargeMessage)
    }
    throw err
  }
}
