// The life of every request, whichever way it is served (a Koa route or a hot route answered before
// Koa): its request id, the JSON answer of an error (never a stack trace, never a 500 for a
// client's mistake, 503 + Retry-After when a store is down), the observers (metrics) and the
// access log of a finished request. app.ts (the Koa kit) and hot-route.ts both build on it.
import type { Context } from 'koa'
import { randomUUID } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { logger } from '../logger.ts'
import { isMongoUnavailable } from '../store/mongo.ts'
import { HttpError, unavailable } from './errors.ts'

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
export function answerError(ctx: HotContext, thrown: any): void {
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

/** The caller's X-Request-Id when it looks like one, else a fresh id; kept in ctx.state with the service. */
export function startRequest(ctx: HotContext | Context, service: string): string {
  const incoming = ctx.req.headers['x-request-id']
  const reqId = typeof incoming === 'string' && /^[\w.-]{8,64}$/.test(incoming) ? incoming : randomUUID()
  ctx.state.reqId = reqId
  ctx.state.service = service
  return reqId
}

/** Metrics hooks and the access log of a finished request. */
export function finishRequest(ctx: HotContext | Context, service: string, started: number): void {
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

