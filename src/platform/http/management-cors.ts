// CORS for management APIs (keys that can change things): closed unless the operator lists the
// browser origins of their own admin front-end (CORS_MANAGEMENT_ORIGINS). @koa/cors does the
// protocol; this only decides which origins get an answer. An unlisted origin gets no CORS headers
// at all, so the browser refuses to let its page read (or, after a preflight, send) anything.
import cors from '@koa/cors'
import type { Context, Middleware, Next } from 'koa'

export function managementCors(origins: readonly string[], opts: { skip?: (path: string) => boolean } = {}): Middleware {
  if (origins.length === 0) return (_ctx: Context, next: Next) => next()
  const allowed = new Set(origins)
  const handle = cors({
    // Echoed (never "*"): only the listed front-ends, each told it is the one allowed.
    origin: (ctx) => {
      const o = ctx.get('Origin')
      return allowed.has(o) ? o : ''
    },
    allowMethods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
    allowHeaders: ['Authorization', 'Content-Type', 'Idempotency-Key', 'X-Request-Id'],
    exposeHeaders: ['Retry-After', 'X-Request-Id'],
    maxAge: 86_400,
    // API keys travel in the Authorization header, set by the page's script; no cookies exist.
    credentials: false,
  })
  const skip = opts.skip
  return skip ? (ctx, next) => (skip(ctx.path) ? next() : handle(ctx, next)) : handle
}
