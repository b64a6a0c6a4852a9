// Headers of every response whose bytes an outsider chose: capture answers (the endpoint's
// configured body and content type) and the management API's captured requests and raw bodies.
// They share an origin with the inspection page, so such bytes must never run as this origin
// (docs/webhooks.md, "Decisions where the spec is silent"). `sandbox` gives a document a unique
// opaque origin with scripts, forms, popups and
// storage off, so even `text/html` or SVG with script reads nothing of ours; `default-src 'none'`
// stops it loading anything; nosniff keeps browsers from guessing HTML out of other types.
// Configured responses cannot set headers of their own, so nothing they carry can undo this.
import type { Context, Next } from 'koa'

export const UNTRUSTED_CSP = "sandbox; default-src 'none'"

export function protectUntrusted(ctx: Context): void {
  ctx.set('Content-Security-Policy', UNTRUSTED_CSP)
  ctx.set('X-Content-Type-Options', 'nosniff')
  ctx.set('Referrer-Policy', 'no-referrer')
}

/** Route middleware form of protectUntrusted. */
export async function untrusted(ctx: Context, next: Next): Promise<void> {
  protectUntrusted(ctx)
  await next()
}
