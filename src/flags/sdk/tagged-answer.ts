// A JSON answer with an entity tag: 304 without a body when the client already holds that tag.
// Koa's ctx.fresh covers GET only; OFREP's bulk evaluation is a POST that revalidates the same way.
import type { Context } from 'koa'

/** RFC 9110 If-None-Match: a list of (possibly weak) entity tags, or "*". */
export function matchesEtag(header: string, etag: string): boolean {
  if (!header) return false
  const bare = etag.replace(/^W\//, '')
  return header.split(',').some((t) => {
    const tag = t.trim()
    return tag === '*' || tag.replace(/^W\//, '') === bare
  })
}

/** Answer `body` (built only when sent) under `etag`, or 304 when If-None-Match holds it. */
export function answerTagged(ctx: Context, etag: string, cacheControl: string, body: string | object | (() => string | object)): void {
  ctx.set('ETag', etag)
  ctx.set('Cache-Control', cacheControl)
  if (matchesEtag(ctx.get('if-none-match'), etag)) {
    ctx.status = 304
    return
  }
  ctx.type = 'application/json'
  ctx.body = typeof body === 'function' ? body() : body
}
