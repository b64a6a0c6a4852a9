// Bodies a route reads itself instead of through the JSON parser (captures, signed webhooks,
// NDJSON batches, OFREP): raw bytes with a size cap. Past the cap → 413, and the rest of the
// request is drained so the client sees that answer instead of a connection reset.
import type { Context } from 'koa'
import type { IncomingMessage } from 'node:http'
import getRawBody from 'raw-body'
import { badRequest, payloadTooLarge } from './errors.ts'

export async function readRawBody(ctx: Context, maxBytes: number, tooLargeMessage = 'Request body too large'): Promise<Buffer> {
  const declared = ctx.get('content-length')
  try {
    return await getRawBody(ctx.req, { limit: maxBytes, length: /^\d+$/.test(declared) ? Number(declared) : undefined })
  } catch (err) {
    if ((err as { type?: string }).type === 'entity.too.large') {
      ctx.req.resume()
      throw payloadTooLarge(tooLargeMessage)
    }
    throw err
  }
}

/**
 * readRawBody for hot paths, with the same answers (413 past the cap, 400 when the body ends short
 * of its Content-Length or the client goes away) but none of raw-body's listener bookkeeping: the
 * listeners stay on the request, which is dropped when it is answered. On the flag evaluation path
 * raw-body's setup and cleanup cost as much as reading the body.
 */
export function readSmallBody(ctx: { readonly req: IncomingMessage }, maxBytes: number, tooLargeMessage = 'Request body too large'): Promise<Buffer> {
  const req = ctx.req
  const declared = req.headers['content-length']
  // Node's parser has refused any Content-Length that is not digits.
  const length = declared === undefined ? -1 : Number(declared)
  if (length > maxBytes) {
    req.resume()
    return Promise.reject(payloadTooLarge(tooLargeMessage))
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    let settled = false
    // Inline listeners only: a named closure per request costs a defineProperty under tsx (keepNames).
    req.on('data', (chunk: Buffer) => {
      if (settled) return
      size += chunk.length
      if (size <= maxBytes) return void chunks.push(chunk)
      settled = true
      reject(payloadTooLarge(tooLargeMessage))
    })
    req.on('end', () => {
      if (settled) return
      settled = true
      if (length >= 0 && size !== length) reject(badRequest('request size did not match content length'))
      else resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size))
    })
    // 'close' also follows every complete body: only one that comes first means the client left.
    req.on('error', () => {
      if (!settled) (settled = true), reject(badRequest('request aborted'))
    })
    req.on('close', () => {
      if (!settled) (settled = true), reject(badRequest('request aborted'))
    })
  })
}
