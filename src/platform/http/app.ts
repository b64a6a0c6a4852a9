// The Koa kit every service's app is built from: the request lifecycle as middleware (request ids,
// access logs, JSON errors; request-lifecycle.ts), JSON body parsing with a size cap, JSON 404/405
// for unknown routes, and the app's hot routes (hot-route.ts) run ahead of all of it.
import { bodyParser } from '@koa/bodyparser'
import Koa, { type Context, type Next } from 'koa'
import { tracingOn } from '../tracing.ts'
import { bodyReadError } from './content-encoding.ts'
import { HttpError } from './errors.ts'
import { hotRoutes, registerHotRoutes, type HotRoute } from './hot-route.ts'
import { answerError, finishRequest, startRequest } from './request-lifecycle.ts'
import { traceRequests } from './trace-requests.ts'

async function errors(ctx: Context, next: Next) {
  try {
    await next()
    if (ctx.status === 404 && ctx.body == null) {
      ctx.status = 404
      ctx.body = { error: 'Not found' }
    } else if (ctx.status === 405 && ctx.body == null) {
      ctx.body = { error: 'Method not allowed' }
    }
  } catch (err: any) {
    answerError(ctx, err)
  }
}

function requestContext(service: string) {
  return async (ctx: Context, next: Next) => {
    const started = performance.now()
    ctx.set('X-Request-Id', startRequest(ctx, service))
    try {
      await next()
    } finally {
      finishRequest(ctx, service, started)
    }
  }
}

/** JSON APIs refuse other media types instead of silently seeing an empty body. */
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH'])

function requireJson(ctx: Context, next: Next) {
  if (BODY_METHODS.has(ctx.method) && ctx.request.length !== 0 && ctx.get('content-length') !== '0') {
    const hasBody = ctx.request.length > 0 || ctx.get('transfer-encoding') !== ''
    if (hasBody && !ctx.is('json') && !ctx.is('application/x-ndjson')) {
      throw new HttpError(415, 'Content-Type must be application/json')
    }
  }
  return next()
}

export interface AppOptions {
  service: string
  /** Max JSON body size (e.g. '1mb'). */
  jsonLimit?: string
  /** Paths whose body is not parsed as JSON (raw capture, signed webhooks read their own). */
  rawPath?: (path: string) => boolean
  trustProxy?: boolean
  /**
   * Routes answered before any other middleware: the requests a service gets by the thousand per
   * second, whose handlers read their own body (see flags/sdk/evaluate-fast-path.ts).
   */
  hotRoutes?: HotRoute[]
  /**
   * Middleware run after the error handler but before the body is parsed, so that what they add
   * (CORS headers) is on every answer, the parser's own 400/413/415 included.
   */
  beforeBody?: Koa.Middleware[]
}

export function createApp(opts: AppOptions): Koa {
  const app = new Koa({ proxy: opts.trustProxy ?? false })
  app.silent = true
  const raw = opts.rawPath ?? (() => false)
  const parser = bodyParser({
    enableTypes: ['json'],
    jsonLimit: opts.jsonLimit ?? '1mb',
    encoding: 'utf-8',
    // Only errors of reading and parsing the body come here (never a route's).
    onError: (err, ctx) => {
      // Past the limit the reader stops and pauses the request: without draining the rest, the
      // keep-alive connection that the 413 is answered on would never read another request
      // (readRawBody does the same).
      if ((err as { type?: string }).type === 'entity.too.large') ctx.req.resume()
      throw bodyReadError(ctx, err)
    },
  })
  // Decided once per app: with tracing off, requests (hot routes included) never meet this layer.
  if (tracingOn()) app.use(traceRequests(opts.service))
  if (opts.hotRoutes?.length) {
    app.use(hotRoutes(opts.service, opts.hotRoutes))
    registerHotRoutes(app, opts.service, opts.hotRoutes)
  }
  app.use(requestContext(opts.service))
  app.use(errors)
  for (const mw of opts.beforeBody ?? []) app.use(mw)
  app.use((ctx, next) => {
    if (raw(ctx.path)) return next()
    return requireJson(ctx, () => parser(ctx, next))
  })
  return app
}
