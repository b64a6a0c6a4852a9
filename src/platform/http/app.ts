// The HTTP kit every service's Koa app is built from: request ids, access logs, JSON errors
// (never a stack trace, never a 500 for a client's mistake), JSON body parsing with a size cap,
// and JSON 404/405 for unknown routes.
import { bodyParser } from '@koa/bodyparser'
import Koa, { type Context, type Next } from 'koa'
import { randomUUID } from 'node:crypto'
import { logger } from '../logger.ts'
import { tracingOn } from '../tracing.ts'
import { bodyReadError } from './content-encoding.ts'
import { HttpError, unavailable } from './errors.ts'
import { isMongoUnavailable } from '../store/mongo.ts'
import { traceRequests } from './trace-requests.ts'

export type RequestHook = (ctx: Context, ms: number) => void
const requestHooks: RequestHook[] = []
/** Observers (metrics) of every finished request. */
export function onRequestDone(h: RequestHook): void {
  requestHooks.push(h)
}

const STATUS_MESSAGES: Record<number, string> = {
  400: 'Bad request',
  404: 'Not found',
  405: 'Method not allowed',
  413: 'Request body too large',
  415: 'Unsupported media type',
}

function clientMessage(err: any): string {
  if (err?.type === 'entity.parse.failed' || (err?.status === 400 && /JSON|Unexpected/i.test(String(err?.message)))) {
    return 'Malformed JSON body'
  }
  if (err?.type === 'entity.too.large' || err?.status === 413) return 'Request body too large'
  if (err?.type === 'encoding.unsupported' || err?.status === 415) return 'Unsupported content encoding'
  if (err?.expose && typeof err.message === 'string') return err.message
  return STATUS_MESSAGES[err?.status] ?? 'Bad request'
}

/**
 * The JSON answer of an error a handler threw: its status for a client's mistake, 503 with
 * Retry-After when the store is down (as when Redis is), else 500 (logged).
 */
function answerError(ctx: Context, thrown: any): void {
  const err = !(thrown instanceof HttpError) && isMongoUnavailable(thrown) ? unavailable() : thrown
  if (err instanceof HttpError) {
    ctx.status = err.status
    ctx.set(err.headers)
    ctx.body = { error: err.message, ...err.extra }
  } else if (typeof err?.status === 'number' && err.status >= 400 && err.status < 500) {
    ctx.status = err.status
    ctx.body = { error: clientMessage(err) }
  } else {
    ctx.status = 500
    ctx.body = { error: 'Internal server error' }
    ctx.state.error = err
  }
  // The driver's error, not the 503 made of it: the log says why. A 503 the code chose to answer
  // (no worker yet, too busy, Redis down at enqueue) is no fault of this process: the access log has it.
  if (ctx.status >= 500 && !(thrown instanceof HttpError && thrown.status === 503)) {
    logger[ctx.status === 503 ? 'warn' : 'error']({ reqId: ctx.state.reqId, err: thrown?.stack ?? String(thrown) }, 'request failed')
  }
}

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

/** The caller's X-Request-Id when it looks like one, else a fresh id; kept in ctx.state with the service. */
function startRequest(ctx: Context, service: string): string {
  const incoming = ctx.req.headers['x-request-id']
  const reqId = typeof incoming === 'string' && /^[\w.-]{8,64}$/.test(incoming) ? incoming : randomUUID()
  ctx.state.reqId = reqId
  ctx.state.service = service
  return reqId
}

/** Metrics hooks and the access log of a finished request. */
function finishRequest(ctx: Context, service: string, started: number): void {
  const ms = performance.now() - started
  for (const h of requestHooks) h(ctx, ms)
  // A 503 is a deliberate answer (not ready yet, no worker, too busy, a store down: each logged where
  // it is found), so it is no error of this request; a 500 is, and the other 5xx are worth a look.
  const level = ctx.status === 503 ? 'info' : ctx.status >= 500 ? 'error' : ctx.status >= 400 ? 'info' : 'debug'
  // Building the record costs on every request; skip it when the level is off (the usual case for 2xx).
  if (logger.isLevelEnabled(level)) {
    logger[level]({ service, reqId: ctx.state.reqId, method: ctx.method, path: ctx.path, route: ctx.state.route, status: ctx.status, ms: Math.round(ms) }, 'request')
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

/**
 * A route answered ahead of the general stack (AppOptions.hotRoutes). It gets what every route
 * gets (request id, metrics, access log, JSON errors) from one plain function instead of two async
 * middleware layers, which on a request that does little else cost a quarter of its time.
 */
export interface HotRoute {
  method: string
  path: string
  /** False leaves the request to the general stack (e.g. a compressed body, which the JSON parser inflates). */
  accepts?(ctx: Context): boolean
  /**
   * Answers with ctx.body, or writes ctx.res itself: then it sets ctx.respond = false and its head
   * carries X-Request-Id (ctx.state.reqId). Throws as any route does.
   */
  handle(ctx: Context): Promise<void> | void
  /** Called before an error answer is made from what handle threw (e.g. to add CORS headers to it). */
  failed?(ctx: Context): void
}

function hotRoutes(service: string, routes: HotRoute[]): Koa.Middleware {
  // No closures made per request here (a named one even costs a defineProperty call under tsx's
  // esbuild keepNames): the route is found by a plain loop.
  const done = (ctx: Context, started: number) => {
    if (ctx.respond !== false) ctx.set('X-Request-Id', ctx.state.reqId)
    finishRequest(ctx, service, started)
  }
  const failed = (ctx: Context, started: number, err: unknown, route: HotRoute) => {
    route.failed?.(ctx)
    answerError(ctx, err)
    done(ctx, started)
  }
  return (ctx, next) => {
    let route: HotRoute | undefined
    for (const r of routes) {
      if (r.path === ctx.path && r.method === ctx.method && (r.accepts === undefined || r.accepts(ctx))) {
        route = r
        break
      }
    }
    if (route === undefined) return next()
    const started = performance.now()
    startRequest(ctx, service)
    ctx.state.route = route.path
    let pending: Promise<void> | void
    try {
      pending = route.handle(ctx)
    } catch (err) {
      return failed(ctx, started, err, route)
    }
    const r = route
    if (pending) return pending.then(() => done(ctx, started), (err) => failed(ctx, started, err, r))
    done(ctx, started)
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
      throw bodyReadError(ctx, err)
    },
  })
  // Decided once per app: with tracing off, requests (hot routes included) never meet this layer.
  if (tracingOn()) app.use(traceRequests(opts.service))
  if (opts.hotRoutes?.length) app.use(hotRoutes(opts.service, opts.hotRoutes))
  app.use(requestContext(opts.service))
  app.use(errors)
  for (const mw of opts.beforeBody ?? []) app.use(mw)
  app.use((ctx, next) => {
    if (raw(ctx.path)) return next()
    return requireJson(ctx, () => parser(ctx, next))
  })
  return app
}
