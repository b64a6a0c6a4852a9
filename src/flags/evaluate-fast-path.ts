// POST /api/v1/evaluate ahead of the general middleware stack. It is the request SDKs send by the
// thousand per second, and the general path (content-type negotiation, the JSON body parser, two
// routers' matching) cost more than evaluating ten flags. Request ids, access logs, metrics and
// error answers are still those of every other route (this runs inside them, see createApp's
// beforeBody); the answer is built by the same handler the route uses. Compressed bodies and other
// media types go on to the general stack, which decompresses or refuses them.
import bourne from '@hapi/bourne'
import type { Context, Middleware, Next } from 'koa'
import { HttpError } from '../platform/http/errors.ts'
import { readRawBody } from '../platform/http/raw-body.ts'
import { evaluateHandler } from './evaluate-routes.ts'
import type { FlagCache } from './flag-cache.ts'
import type { Admit } from './sdk-auth.ts'

export const EVALUATE_PATH = '/api/v1/evaluate'
const MAX_BODY_BYTES = 1024 * 1024

function isPlainJsonRequest(ctx: Context): boolean {
  const h = ctx.req.headers
  if (h['content-encoding'] !== undefined && h['content-encoding'] !== 'identity') return false
  if (h['content-length'] === undefined ? h['transfer-encoding'] === undefined : h['content-length'] === '0') return false
  const type = h['content-type']
  return type === 'application/json' || (type !== undefined && ctx.is('json') !== false)
}

export function evaluateFastPath(cache: FlagCache, admit: Admit): Middleware {
  const handle = evaluateHandler(cache, admit)
  return async (ctx: Context, next: Next) => {
    if (ctx.method !== 'POST' || ctx.path !== EVALUATE_PATH || !isPlainJsonRequest(ctx)) return next()
    ctx.state.route = EVALUATE_PATH
    const text = (await readRawBody(ctx, MAX_BODY_BYTES)).toString('utf8')
    try {
      // As the general JSON parser does: a "__proto__" key is refused, not merged.
      ctx.request.body = bourne.parse(text, { protoAction: 'error' })
    } catch {
      throw new HttpError(400, 'Malformed JSON body')
    }
    await handle(ctx)
  }
}
