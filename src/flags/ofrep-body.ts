// OFREP bodies are read here rather than by the app's JSON parser, so that a malformed body gets
// the protocol's PARSE_ERROR answer instead of the generic one.
import type { Context } from 'koa'
import { readRawBody } from '../platform/http/raw-body.ts'

export const OFREP_BODY_LIMIT = 256 * 1024

export type BodyResult = { ok: true; value: unknown } | { ok: false; details: string }

export async function readJson(ctx: Context, limit = OFREP_BODY_LIMIT): Promise<BodyResult> {
  const text = (await readRawBody(ctx, limit)).toString('utf8').trim()
  // The protocol allows an empty request: no context.
  if (text === '') return { ok: true, value: {} }
  try {
    return { ok: true, value: JSON.parse(text) }
  } catch {
    return { ok: false, details: 'Malformed JSON body' }
  }
}
