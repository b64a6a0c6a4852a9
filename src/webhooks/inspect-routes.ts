// The inspection page (/inspect/<token>): a static HTML shell under a strict Content Security
// Policy (no inline script or style; its one script and stylesheet allowed by nonce) whose
// script, served as a separate file, reads the captured requests through the authenticated
// management API and renders them with textContent only, so captured content can never run; its
// actions (replay, verify, download, delete) call that same API with the same key. The API key is
// given in the URL fragment (#key=…, never sent to the server) or typed into the page, and held in
// the script's memory only (never in web storage, which any same-origin document could read:
// docs/webhooks.md, "Decisions where the spec is silent").
import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import Router from '@koa/router'
import type { Context } from 'koa'
import { getAccount } from '../platform/accounts.ts'
import { notFound } from '../platform/http/errors.ts'
import type { Platform } from '../platform/platform.ts'
import { SCHEMES } from './signatures/index.ts'
import { endpoints, isExpired } from './store/endpoint-store.ts'
import { publicBase } from './store/present.ts'

/**
 * The page's CSP. Scripts and styles are allowed by this response's nonce, not by `'self'`: capture
 * URLs on this origin answer with any content type an account configures (text/javascript, text/css),
 * so `'self'` would let markup injected by some future bug load one of them as code.
 */
export const inspectCsp = (nonce: string) =>
  `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; connect-src 'self'; img-src 'self'; ` +
  "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

/** The page's assets are not documents; they get the strictest policy. */
const ASSET_CSP = "default-src 'none'; frame-ancestors 'none'"

const asset = (name: string) => readFileSync(new URL(`./static/${name}`, import.meta.url))
const ASSETS: Record<string, { type: string; body: Buffer }> = {
  'inspect.js': { type: 'text/javascript; charset=utf-8', body: asset('inspect.js') },
  'inspect-format.js': { type: 'text/javascript; charset=utf-8', body: asset('inspect-format.js') },
  'inspect.css': { type: 'text/css; charset=utf-8', body: asset('inspect.css') },
}
/** Browsers ask for /favicon.ico on every page of the origin; a 404 there is noise in every log. */
const FAVICON = asset('favicon.ico')

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)

function page(token: string, name: string | null, captureUrl: string, nonce: string): string {
  const title = escapeHtml(name ? `${name} · webhook inspector` : 'Webhook inspector')
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${title}</title>
<link rel="icon" href="/favicon.ico">
<link rel="stylesheet" href="/static/inspect.css" nonce="${nonce}">
<script src="/static/inspect-format.js" nonce="${nonce}" defer></script>
<script src="/static/inspect.js" nonce="${nonce}" defer></script>
</head>
<body data-token="${escapeHtml(token)}" data-schemes="${SCHEMES.join(' ')}">
<header><h1>${title}</h1><p id="status" role="status">Loading…</p></header>
<section id="capture-bar" aria-label="Capture URL">
  <span id="capture-label">Send webhooks to</span>
  <code id="capture-url" aria-labelledby="capture-label">${escapeHtml(captureUrl)}</code>
  <button id="copy-url" type="button">Copy URL</button>
</section>
<form id="key-form" hidden>
  <label for="key-input">API key (wv_…)</label>
  <input id="key-input" type="password" autocomplete="off" spellcheck="false">
  <button type="submit">Open</button>
</form>
<main>
  <section id="list-pane">
    <form id="filter-form" role="search"><input id="filter" type="search" autocomplete="off" spellcheck="false" placeholder="Filter: method, path, header or body text — Enter searches older requests" aria-label="Filter requests"></form>
    <ul id="requests" aria-label="Captured requests"></ul></section>
  <section id="detail" aria-live="polite"><p class="hint">Select a request to see its headers and body.</p></section>
</main>
</body>
</html>
`
}

function security(ctx: Context, csp: string): void {
  ctx.set('Content-Security-Policy', csp)
  ctx.set('X-Content-Type-Options', 'nosniff')
  ctx.set('Referrer-Policy', 'no-referrer')
  ctx.set('X-Frame-Options', 'DENY')
}

export function inspectRouter(platform: Platform): Router {
  const router = new Router()
  router.get('/favicon.ico', (ctx) => {
    security(ctx, ASSET_CSP)
    ctx.set('Cache-Control', 'public, max-age=86400')
    ctx.type = 'image/x-icon'
    ctx.body = FAVICON
  })
  router.get('/static/:file', (ctx) => {
    const a = ASSETS[ctx.params.file!]
    if (!a) throw notFound()
    security(ctx, ASSET_CSP)
    ctx.set('Cache-Control', 'public, max-age=300')
    ctx.type = a.type
    ctx.body = a.body
  })
  router.get('/inspect/:token', async (ctx) => {
    const e = await endpoints(platform.db).findOne({ _id: ctx.params.token! })
    const account = e ? await getAccount(platform.db, e.account_id) : null
    if (!e || !account || isExpired(e, account)) throw notFound('Endpoint not found')
    const nonce = randomBytes(16).toString('base64')
    security(ctx, inspectCsp(nonce))
    ctx.set('Cache-Control', 'no-store')
    ctx.type = 'text/html; charset=utf-8'
    ctx.body = page(e._id, e.name, `${publicBase(ctx, platform.config)}/hook/${e._id}`, nonce)
  })
  return router
}
