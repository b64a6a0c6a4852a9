// Hot routes: the requests a service gets by the thousand per second and that do little work (flag
// evaluation), run by one plain function with everything a route gets (request id, JSON errors,
// metrics, access log; request-lifecycle.ts) instead of Koa's middleware layers. before-koa.ts
// serves them from the server's request listener before Koa builds a context; when a server calls
// the app's own callback instead, the first middleware of the app runs them (hotRoutes below).
import type { IncomingMessage } from 'node:http'
import type Koa from 'koa'
import { answerError, finishRequest, startRequest, type HotContext } from './request-lifecycle.ts'

export type { HotContext }

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

export function hotRoutes(service: string, routes: HotRoute[]): Koa.Middleware {
  return (ctx, next) => {
    const route = findHotRoute(routes, ctx.method, ctx.path, ctx.req)
    if (route === undefined) return next()
    return runHotRoute(ctx, route, service)
  }
}

/** The hot routes of the apps createApp made, for the server's request listener (before-koa.ts). */
const hotRoutesOfApp = new WeakMap<Koa, { service: string; routes: readonly HotRoute[] }>()

/** Records an app's hot routes for the server's request listener. */
export function registerHotRoutes(app: Koa, service: string, routes: readonly HotRoute[]): void {
  hotRoutesOfApp.set(app, { service, routes })
}

export function hotRoutesOf(app: Koa): { service: string; routes: readonly HotRoute[] } | undefined {
  return hotRoutesOfApp.get(app)
}

