// OFREP bodies are read here rather than by the app's JSON parser, so that a malformed body gets
// the protocol's PARSE_ERROR answer instead of the generic one.
import type { Context } from 'koa'
import { HttpError } from '../platform/http/errors.ts'

export const OFREP_BODY_LIMIT = 256 * 1024

export type BodyResult = { ok: true; value: unknown } | { ok: false; details: string }

export async function readJson(ctx: Context, limit = OFREP_BODY_LIMIT): Promise<BodyResult> {
  const declared = Number(ctx.get('content-length') || 0)
  if (declared > limit) throw new HttpError(413, 'Request body too large')
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length
    if (size > limit) throw new HttpError(413, 'Request body too large')
    chunks.push(chunk)
  }
  const text = Buffer.concat(chunks).toString('utf8').trim()
  // The protocol allows an empty request: no context.
  if (text === '') return { ok: true, value: {} }
  try {
    return { ok: true, value: JSON.parse(text) }
  } catch {
    return { ok: false, details: 'Malformed JSON body' }
  }
}
