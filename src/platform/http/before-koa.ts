// The request listener of a service's HTTP server: the app's hot routes (app.ts HotRoute) are
// answered here, from (req, res), before Koa builds its context; every other request goes to
// app.callback(). On an evaluation request Koa's own per-request work (context, request and
// response objects, on-finished, koa-compose, its response step) cost about as much as the
// route's own code beyond the body parse (docs/benchmarks.md, "where an evaluate request's CPU
// goes"). A hot route keeps every guarantee of the general stack: request id, metrics hooks and
// the access log (runHotRoute), JSON error answers with their statuses and headers. With tracing on
// the app's callback serves everything, so that hot routes get their server span too.
import type Koa from 'koa'
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http'
import vary from 'vary'
import { logger } from '../logger.ts'
import { tracingOn } from '../tracing.ts'
import { findHotRoute, hotRoutesOf, runHotRoute, type HotContext, type HotRoute } from './hot-route.ts'

/** The part of a Koa Context a hot route uses (app.ts HotContext), over the bare request and response. */
class BareContext implements HotContext {
  readonly state: Record<string, any> = {}
  readonly request: { body?: unknown } = {}
  body: unknown = undefined
  respond: boolean | undefined = undefined

  constructor(
    readonly req: IncomingMessage,
    readonly res: ServerResponse,
    readonly method: string,
    readonly path: string,
  ) {
    // As Koa does: nothing answered is a 404, never an accidental 200.
    res.statusCode = 404
  }

  get status(): number {
    return this.res.statusCode
  }

  set status(code: number) {
    if (!this.res.headersSent) this.res.statusCode = code
  }

  get headerSent(): boolean {
    return this.res.headersSent
  }

  set(field: string | Record<string, string | string[]>, value?: string | string[]): void {
    if (this.res.headersSent) return
    if (typeof field === 'string') this.res.setHeader(field, value!)
    else for (const name in field) this.res.setHeader(name, field[name]!)
  }

  vary(field: string): void {
    if (!this.res.headersSent) vary(this.res, field)
  }
}

/** Koa's response step for what a hot route left in ctx (an error's JSON answer). */
function respond(ctx: BareContext): void {
  if (ctx.respond === false) return
  const res = ctx.res
  try {
    // Koa's ctx.writable: a client that left gets nothing written.
    if (res.writableEnded || (res.socket !== null && !res.socket.writable)) return void res.end()
    if (ctx.body == null) return void res.end()
    const json = JSON.stringify(ctx.body)
    if (!res.headersSent) {
      res.setHeader('Content-Type', 'application/json; charset=utf-8')
      res.setHeader('Content-Length', Buffer.byteLength(json))
    }
    res.end(json)
  } catch (err) {
    logger.error({ reqId: ctx.state.reqId, err: String(err) }, 'answer could not be written')
    res.destroy()
  }
}

/** The request's path when it is exactly one of the routes' paths (a query may follow); else undefined. */
function hotPath(url: string, routes: readonly HotRoute[]): string | undefined {
  for (const r of routes) {
    if (url === r.path || (url.startsWith(r.path) && url.charCodeAt(r.path.length) === 63 /* ? */)) return r.path
  }
  return undefined
}

/**
 * The listener to give http.createServer for a Koa app made by createApp: its hot routes first,
 * then the app. Call it once the app has all its middleware (the callback is composed here).
 */
export function requestListener(app: Koa): RequestListener {
  const general = app.callback()
  const hot = hotRoutesOf(app)
  if (hot === undefined || tracingOn()) return general
  const { service, routes } = hot
  return (req, res) => {
    let route: HotRoute | undefined
    const path = hotPath(req.url ?? '', routes)
    if (path !== undefined) {
      try {
        route = findHotRoute(routes, req.method ?? '', path, req)
      } catch {
        // An accepts() that cannot read the request (a malformed header) leaves it to the general stack.
        route = undefined
      }
    }
    if (route === undefined) return general(req, res)
    const ctx = new BareContext(req, res, route.method, route.path)
    let pending: Promise<void> | void
    try {
      pending = runHotRoute(ctx, route, service)
    } catch (err) {
      // runHotRoute answers what the route throws; only a fault of ours (a request hook) is left.
      return broken(ctx, err)
    }
    if (pending) pending.then(() => respond(ctx), (err) => broken(ctx, err))
    else respond(ctx)
  }
}

/** What Koa's ctx.onerror does for a fault outside the route: a logged 500, never an uncaught exception. */
function broken(ctx: BareContext, err: unknown): void {
  logger.error({ reqId: ctx.state.reqId, err: (err as Error)?.stack ?? String(err) }, 'request failed')
  // A head already written belongs to an answer the route ends itself (end-soon.ts), as under Koa.
  if (ctx.res.headersSent) return
  ctx.status = 500
  ctx.body = { error: 'Internal server error' }
  ctx.respond = true
  respond(ctx)
}
