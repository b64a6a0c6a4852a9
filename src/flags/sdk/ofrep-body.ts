// OFREP bodies are read here rather than by the app's JSON parser, so that a malformed body gets
// the protocol's PARSE_ERROR answer instead of the generic one. Compressed bodies are inflated.
import type { Context } from 'koa'
import { readDecodedBody } from '../../platform/http/content-encoding.ts'
import { HttpError } from '../../platform/http/errors.ts'

export const OFREP_BODY_LIMIT = 256 * 1024

export type BodyResult = { ok: true; value: unknown } | { ok: false; details: string }

export async function readJson(ctx: Context, limit = OFREP_BODY_LIMIT): Promise<BodyResult> {
  let text: string
  try {
    text = (await readDecodedBody(ctx, limit)).toString('utf8').trim()
  } catch (err) {
    // A body that is not what its Content-Encoding says cannot be parsed either.
    if (err instanceof HttpError && err.status === 400) return { ok: false, details: err.message }
    throw err
  }
  // The protocol allows an empty request: no context.
  if (text === '') return { ok: true, value: {} }
  try {
    return { ok: true, value: JSON.parse(text) }
  } catch {
    return { ok: false, details: 'Malformed JSON body' }
  }
}
