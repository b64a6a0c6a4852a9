// The HTTP kit every service's Koa app is built from: request ids, access logs, JSON errors
// (never a stack trace, never a 500 for a client's mistake), JSON body parsing with a size cap,
// and JSON 404/405 for unknown routes. Hot routes (HotRoute) get the same from one plain function;
// before-koa.ts serves them from the server's request listener, ahead of Koa.
import { bodyParser } from '@koa/bodyparser'
import Koa, { type Context, type Next } from 'koa'
import { randomUUID } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { logger } from '../logger.ts'
import { tracingOn } from '../tracing.ts'
import { bodyReadError } from './content-encoding.ts'
import { HttpError, unavailable } from './errors.ts'
import { isMongoUnavailable } from '../store/mongo.ts'
import { traceRequests } from './trace-requests.ts'

/**
 * What the observers of a finished request read. A Koa Context is one; so is the lighter context
 * of a hot route answered before Koa (before-koa.ts), which has nothing else of Koa's.
 */
export interface FinishedRequest {
  readonly method: string
  readonly path: string
  readonly status: number
  /** reqId, service, and route (the template) once a route was chosen. */
  readonly state: Record<string, any>
}

export type RequestHook = (req: FinishedRequest, ms: number) => void
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
function answerError(ctx: HotContext, thrown: any): void {
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
function startRequest(ctx: HotContext | Context, service: string): string {
  const incoming = ctx.req.headers['x-request-id']
  const reqId = typeof incoming === 'string' && /^[\w.-]{8,64}$/.test(incoming) ? incoming : randomUUID()
  ctx.state.reqId = reqId
  ctx.state.service = service
  return reqId
}

/** Metrics hooks and the access log of a finished request. */
function finishRequest(ctx: HotContext | Context, service: string, started: number): void {
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
 * What a hot route reads and sets of its request: the part of Koa's Context it uses, which a Koa
 * Context has, and which before-koa.ts gives without building one.
 */
export interface HotContext {
  readonly req: IncomingMessage
  readonly res: ServerResponse
  readonly method: string
  /** The path without its query. */
  readonly path: string
  readonly state: Record<string, any>
  /** The parsed body, once the route has read it. */
  readonly request: { body?: unknown }
  /** An error's answer: status, then body (JSON). */
  status: number
  body: unknown
  /** False once the route wrote the answer to `res` itself. */
  respond?: boolean
  readonly headerSent: boolean
  set(field: string, value: string | string[]): void
  set(fields: Record<string, string | string[]>): void
  /** Adds `field` to the Vary header. */
  vary(field: string): void
}

/**
 * A route answered ahead of the general stack (AppOptions.hotRoutes). It gets what every route
 * gets (request id, metrics, access log, JSON errors) from one plain function instead of two async
 * middleware layers, which on a request that does little else cost a quarter of its time. Served by
 * the server's request listener before Koa builds a context (before-koa.ts), or, when a server
 * calls the app's own callback (tracing on, app.listen), by the first middleware.
 */
export interface HotRoute {
  method: string
  path: string
  /** False leaves the request to the general stack (e.g. a compressed body, which the JSON parser inflates). */
  accepts?(req: IncomingMessage): boolean
  /**
   * Answers with ctx.body, or writes ctx.res itself: then it sets ctx.respond = false and its head
   * carries X-Request-Id (ctx.state.reqId). Throws as any route does.
   */
  handle(ctx: HotContext): Promise<void> | void
  /** Called before an error answer is made from what handle threw (e.g. to add CORS headers to it). */
  failed?(ctx: HotContext): void
}

// Module-level steps, no closures made per request (a named one even costs a defineProperty call
// under tsx's esbuild keepNames).
function hotDone(ctx: HotContext, service: string, started: number): void {
  if (ctx.respond !== false) ctx.set('X-Request-Id', ctx.state.reqId)
  finishRequest(ctx, service, started)
}

function hotFailed(ctx: HotContext, service: string, started: number, err: unknown, route: HotRoute): void {
  route.failed?.(ctx)
  answerError(ctx, err)
  hotDone(ctx, service, started)
}

/**
 * Runs a hot route the request was matched to: request id, the handler, an error's JSON answer
 * (ctx.status and ctx.body, for the caller to send), metrics and the access log. What the route
 * throws is answered; only a request hook that throws makes this throw or reject.
 */
export function runHotRoute(ctx: HotContext, route: HotRoute, service: string): Promise<void> | void {
  const started = performance.now()
  startRequest(ctx, service)
  ctx.state.route = route.path
  let pending: Promise<void> | void
  try {
    pending = route.handle(ctx)
  } catch (err) {
    return hotFailed(ctx, service, started, err, route)
  }
  if (pending) return pending.then(() => hotDone(ctx, service, started), (err) => hotFailed(ctx, service, started, err, route))
  hotDone(ctx, service, started)
}

/** The hot route of `routes` a request is for, if any (a plain loop: no closure per request). */
export function findHotRoute(routes: readonly HotRoute[], method: string, path: string, req: IncomingMessage): HotRoute | undefined {
  for (const r of routes) {
    if (r.path === path && r.method === method && (r.accepts === undefined || r.accepts(req))) return r
  }
  return undefined
}

function hotRoutes(service: string, routes: HotRoute[]): Koa.Middleware {
  return (ctx, next) => {
    const route = findHotRoute(routes, ctx.method, ctx.path, ctx.req)
    if (route === undefined) return next()
    return runHotRoute(ctx, route, service)
  }
}

/** The hot routes of the apps createApp made, for the server's request listener (before-koa.ts). */
const hotRoutesOfApp = new WeakMap<Koa, { service: string; routes: readonly HotRoute[] }>()

export function hotRoutesOf(app: Koa): { service: string; routes: readonly HotRoute[] } | undefined {
  return hotRoutesOfApp.get(app)
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
    hotRoutesOfApp.set(app, { service: opts.service, routes: opts.hotRoutes })
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
