// The readable API docs page (/docs): Swagger UI from the swagger-ui-dist npm package, served by us
// (no CDN) under a strict Content-Security-Policy, pointed at this service's /openapi.json.
import type { Context } from 'koa'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'

// The package's folder, found without loading its entry: that entry loads the whole 1 MB UI bundle,
// ~0.3 s of CPU at every start for a page few requests open.
const distDir = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'))

/** Inline scripts are forbidden by our CSP, so the UI starts from a script file of our own. */
const INIT_JS = `window.addEventListener('load', function () {
  window.ui = SwaggerUIBundle({ url: '/openapi.json', dom_id: '#swagger-ui', deepLinking: true, tryItOutEnabled: false })
})
`

// Swagger UI sets style attributes from JavaScript, which style-src 'self' alone would block.
export const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ')

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)

function page(title: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<link rel="stylesheet" href="/docs/swagger-ui.css">
<link rel="icon" type="image/png" href="/docs/favicon-32x32.png">
</head>
<body>
<div id="swagger-ui"></div>
<script src="/docs/swagger-ui-bundle.js"></script>
<script src="/docs/init.js"></script>
</body>
</html>
`
}

type Asset = { type: string; body: string | Buffer }
let assets: Record<string, Asset> | null = null

/** Read once, on first use: the bundle is ~1.5 MB and most processes never serve it. */
function loadAssets(): Record<string, Asset> {
  assets ??= {
    'swagger-ui.css': { type: 'text/css; charset=utf-8', body: readFileSync(join(distDir, 'swagger-ui.css')) },
    'swagger-ui-bundle.js': { type: 'text/javascript; charset=utf-8', body: readFileSync(join(distDir, 'swagger-ui-bundle.js')) },
    'init.js': { type: 'text/javascript; charset=utf-8', body: INIT_JS },
    'favicon-32x32.png': { type: 'image/png', body: readFileSync(join(distDir, 'favicon-32x32.png')) },
  }
  return assets
}

export const DOCS_ASSETS = ['swagger-ui.css', 'swagger-ui-bundle.js', 'init.js', 'favicon-32x32.png'] as const

function secure(ctx: Context): void {
  ctx.set('Content-Security-Policy', DOCS_CSP)
  ctx.set('X-Content-Type-Options', 'nosniff')
  ctx.set('Referrer-Policy', 'no-referrer')
}

export function serveDocsPage(ctx: Context, service: string): void {
  secure(ctx)
  ctx.type = 'text/html; charset=utf-8'
  ctx.set('Cache-Control', 'no-cache')
  ctx.body = page(`queueworks ${service} API`)
}

/** Returns false for a name that is not one of our assets (the caller answers 404). */
export function serveDocsAsset(ctx: Context, name: string): boolean {
  if (!(DOCS_ASSETS as readonly string[]).includes(name)) return false
  const a = loadAssets()[name]!
  secure(ctx)
  ctx.type = a.type
  ctx.set('Cache-Control', 'public, max-age=3600')
  ctx.body = a.body
  return true
}
