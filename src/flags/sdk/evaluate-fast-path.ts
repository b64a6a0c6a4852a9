// POST /api/v1/evaluate as a hot route (platform/http/hot-route.ts HotRoute): answered from the HTTP
// server's request listener before Koa builds a context (platform/http/before-koa.ts). It is the
// request SDKs send by the thousand per second, and the general path (Koa's context, two async
// middleware layers, content-type negotiation, the JSON body parser, two routers' matching, Koa's
// response step) cost several times what evaluating ten flags does. Request ids,
// access logs, metrics and error answers are those of every other route; the answer is built by
// the same handler the route uses. Compressed bodies and other media types go on to the general
// stack, which inflates or refuses them.
import bourne from '@hapi/bourne'
import type { IncomingMessage } from 'node:http'
import typeis from 'type-is'
import type { HotRoute } from '../../platform/http/hot-route.ts'
import { HttpError } from '../../platform/http/errors.ts'
import { readSmallBody } from '../../platform/http/raw-body.ts'
import { evaluateHandler } from './evaluate-routes.ts'
import { corsForAnyOrigin } from './evaluation-cors.ts'
import type { FlagCache } from './flag-cache.ts'
import type { EvaluationGate } from './sdk-auth.ts'

const EVALUATE_PATH = '/api/v1/evaluate'
const MAX_BODY_BYTES = 1024 * 1024

function isPlainJsonRequest(req: IncomingMessage): boolean {
  const h = req.headers
  if (h['content-encoding'] !== undefined && h['content-encoding'] !== 'identity') return false
  if (h['content-length'] === undefined ? h['transfer-encoding'] === undefined : h['content-length'] === '0') return false
  const type = h['content-type']
  // The exact common type without parsing; others as Koa's ctx.is('json') decides (the same library).
  return type === 'application/json' || (type !== undefined && typeis(req, ['json']) !== false)
}

export function evaluateHotRoute(cache: FlagCache, gate: EvaluationGate): HotRoute {
  const handle = evaluateHandler(cache, gate)
  return {
    method: 'POST',
    path: EVALUATE_PATH,
    accepts: isPlainJsonRequest,
    handle: (ctx) =>
      readSmallBody(ctx, MAX_BODY_BYTES).then((buf) => {
        try {
          // As the general JSON parser does: a "__proto__" key is refused, not merged.
          ctx.request.body = bourne.parse(buf.toString('utf8'), { protoAction: 'error' })
        } catch {
          throw new HttpError(400, 'Malformed JSON body')
        }
        return handle(ctx)
      }),
    // Errors before the project is known (body, key, rate limit) are readable from any origin;
    // the handler has decided by the project for those after (evaluation-cors.ts).
    failed: corsForAnyOrigin,
  }
}
