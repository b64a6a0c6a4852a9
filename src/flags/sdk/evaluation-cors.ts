// CORS of the evaluation API (POST/GET /api/v1/evaluate…, /ofrep/v1/…): SDK keys are made to live
// in browser pages, so pages of other origins must be able to call it, limited per project by its
// allowed_origins (default any). Written by hand rather than with @koa/cors, which decides the
// origin before the route runs: here the project, and so the decision, is only known once the
// route has authenticated the SDK key, and POST /api/v1/evaluate is answered before Koa
// (evaluate-fast-path.ts) and writes its own head.
//
// - A preflight (OPTIONS with Access-Control-Request-Method) carries no credentials, so it cannot
//   name a project: it is granted to any origin, for the headers SDKs send, cached a day.
// - The actual answer gets Access-Control-Allow-Origin (the request's origin, echoed, with
//   Vary: Origin) only when the SDK key's project allows that origin; otherwise the browser keeps
//   the answer from the page. Answers given before the project is known (no or bad key, rate limit,
//   unreadable body) are granted to any origin so that SDKs can report them: they hold nothing of
//   a project.
// - No Access-Control-Allow-Credentials: the SDK key travels in a header the page's script sets,
//   and this service has no cookies for a browser to add.
// - A request without an Origin header (servers, curl) gets none of these headers (but Vary: Origin
//   on the general stack) and costs the hot path nothing.
import type { Middleware } from 'koa'
import type { HotContext } from '../../platform/http/hot-route.ts'

const ALLOW_METHODS = 'GET, HEAD, POST'
// What the OFREP web provider sends (Content-Type application/json, the SDK key as Bearer token,
// If-None-Match on polls) and the alternatives the API accepts (X-API-Key, X-Request-Id).
const ALLOW_HEADERS = 'Authorization, Content-Type, If-None-Match, X-API-Key, X-Request-Id'
// ETag for the provider's conditional polls; Retry-After for its back-off after a 429.
const EXPOSE_HEADERS = 'ETag, Retry-After, X-Request-Id'
// A day. Browsers cap it (Chromium at 2 hours, Firefox at 24).
const MAX_AGE = '86400'

/** Origins a project's evaluations may be read from: any, or an exact list (normalised origins). */
export interface OriginPolicy {
  readonly any: boolean
  readonly origins: ReadonlySet<string>
}

export const ANY_ORIGIN_POLICY: OriginPolicy = Object.freeze({ any: true, origins: new Set<string>() })

export function originPolicy(list: readonly string[]): OriginPolicy {
  return list.includes('*') ? ANY_ORIGIN_POLICY : { any: false, origins: new Set(list) }
}

export function allowsOrigin(p: OriginPolicy, origin: string): boolean {
  return p.any || p.origins.has(origin)
}

// Set on ctx.state once a route has decided by the project (only for requests with an Origin).
const DECIDED = 'flagsCorsDecided'

export function isEvaluationPath(path: string): boolean {
  return path.startsWith('/ofrep/v1/') || (path.startsWith('/api/v1/evaluate') && (path.length === 16 || path.charCodeAt(16) === 47))
}

function grant(ctx: HotContext, origin: string): void {
  ctx.set('Access-Control-Allow-Origin', origin)
  ctx.set('Access-Control-Expose-Headers', EXPOSE_HEADERS)
  ctx.vary('Origin')
}

/** Decide by the project, as soon as a route knows it (before anything that may fail after that). */
export function corsByProject(ctx: HotContext, policy: OriginPolicy): void {
  const origin = ctx.req.headers.origin
  if (origin === undefined || ctx.headerSent) return
  ctx.state[DECIDED] = true
  if (allowsOrigin(policy, origin)) grant(ctx, origin)
  else ctx.vary('Origin')
}

/** An answer given before the project was known: readable from any origin. */
export function corsForAnyOrigin(ctx: HotContext): void {
  const origin = ctx.req.headers.origin
  if (origin === undefined || ctx.headerSent || ctx.state[DECIDED] === true) return
  grant(ctx, origin)
}

/** For answers written by hand with res.writeHead(status, flatHeaderList): adds to `head`. */
export function pushCorsHead(head: string[], origin: string, policy: OriginPolicy): void {
  if (allowsOrigin(policy, origin)) head.push('Access-Control-Allow-Origin', origin, 'Access-Control-Expose-Headers', EXPOSE_HEADERS, 'Vary', 'Origin')
  else head.push('Vary', 'Origin')
}

/**
 * The general stack's part: answers preflights of evaluation paths, and grants answers that no
 * route decided by project (errors before authentication, unknown paths) to any origin.
 */
export function evaluationCors(): Middleware {
  return async (ctx, next) => {
    if (!isEvaluationPath(ctx.path)) return next()
    // Also without an Origin: a cache that stored this answer must not give it to a page (the OFREP
    // bulk answer may be stored and revalidated: Cache-Control no-cache with an ETag).
    ctx.vary('Origin')
    const origin = ctx.req.headers.origin
    if (origin === undefined) return next()
    if (ctx.method === 'OPTIONS' && ctx.get('Access-Control-Request-Method')) {
      ctx.set('Access-Control-Allow-Origin', origin)
      ctx.set('Access-Control-Allow-Methods', ALLOW_METHODS)
      ctx.set('Access-Control-Allow-Headers', ALLOW_HEADERS)
      ctx.set('Access-Control-Max-Age', MAX_AGE)
      ctx.status = 204
      return
    }
    try {
      await next()
    } finally {
      corsForAnyOrigin(ctx)
    }
  }
}
