// Serving a web console from its own service: the single page (index.html) at `/` and at every
// deep link the console's router knows (`/projects/...`, `/sign-in`, `/account`), and its bundle at
// /console/assets/<content-hashed name>. Every answer carries a strict Content Security Policy (no
// inline script or style; only this origin's files), nosniff and no referrer. A plain middleware,
// not a router: these pages are not API operations, so /openapi.json leaves them out.
import { promises as fs } from 'node:fs'
import path from 'node:path'
import type { Context, Middleware, Next } from 'koa'
import { logger } from '../logger.ts'
import { ConsoleBundle, type ConsoleManifest } from './console-build.ts'
import { HttpError, notFound } from './errors.ts'

export const CONSOLE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; " +
  "form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

export const ASSET_PREFIX = '/console/assets/'

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
  '.woff': 'font/woff',
  '.map': 'application/json',
}

export interface ConsolePagesOptions {
  /** The console's folder under src/console/ (its entry is main.tsx there). */
  name: string
  /** The page's <title>. */
  title: string
  /** Paths answered with the page: exact ones and prefixes (a prefix `/projects` covers `/projects/x/y`). */
  paths: string[]
  /** Where sources and output live (tests); defaults in console-build.ts. */
  sourceDir?: string
  outDir?: string
  /**
   * Frames of blob: URLs the page makes itself (the invoice console's PDF preview): adds
   * `frame-src blob:` to the policy, nothing else. No other console needs frames.
   */
  blobFrames?: boolean
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)

/** The shell: the bundle mounts into #app. The icon is empty (data:), so browsers ask for no /favicon.ico. */
export function consoleHtml(m: ConsoleManifest, title: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(title)}</title>
<link rel="icon" href="data:,">
${m.css ? `<link rel="stylesheet" href="${ASSET_PREFIX}${m.css}">\n` : ''}<script type="module" src="${ASSET_PREFIX}${m.js}"></script>
</head>
<body>
<div id="app"></div>
<noscript><p>This console needs JavaScript. The API it uses is described at /docs.</p></noscript>
</body>
</html>
`
}

/** The policy of a console's answers: CONSOLE_CSP, plus `frame-src blob:` for a console that frames its own blobs. */
export function consoleCsp(opts: { blobFrames?: boolean } = {}): string {
  return opts.blobFrames ? `${CONSOLE_CSP}; frame-src blob:` : CONSOLE_CSP
}

function secure(ctx: Context, csp = CONSOLE_CSP): void {
  ctx.set('Content-Security-Policy', csp)
  ctx.set('X-Content-Type-Options', 'nosniff')
  ctx.set('Referrer-Policy', 'no-referrer')
  ctx.set('X-Frame-Options', 'DENY')
  ctx.set('Cross-Origin-Opener-Policy', 'same-origin')
}

function isPagePath(p: string, paths: string[]): boolean {
  if (p === '/') return true
  return paths.some((x) => p === x || p.startsWith(`${x}/`))
}

export function consolePages(opts: ConsolePagesOptions): Middleware & { bundle: ConsoleBundle } {
  const bundle = new ConsoleBundle({ name: opts.name, sourceDir: opts.sourceDir, outDir: opts.outDir })
  const csp = consoleCsp(opts)
  const manifest = async (): Promise<ConsoleManifest> => {
    try {
      return await bundle.current()
    } catch (err) {
      logger.error({ err: String(err), console: opts.name }, 'console bundle build failed')
      throw new HttpError(500, 'The console could not be built (the server log says why)')
    }
  }
  const mw = async (ctx: Context, next: Next) => {
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') return next()
    if (ctx.path.startsWith(ASSET_PREFIX)) {
      const name = ctx.path.slice(ASSET_PREFIX.length)
      const m = await manifest()
      // Only what the build wrote: never a path taken from the URL as such.
      if (!m.files.includes(name)) {
        secure(ctx)
        throw notFound('Console asset not found')
      }
      const body = await fs.readFile(path.join(bundle.outDir, name)).catch(() => null)
      if (!body) throw notFound('Console asset not found')
      secure(ctx)
      ctx.set('Cache-Control', 'public, max-age=31536000, immutable')
      ctx.type = TYPES[path.extname(name)] ?? 'application/octet-stream'
      ctx.body = body
      return
    }
    if (!isPagePath(ctx.path, opts.paths)) return next()
    const m = await manifest()
    secure(ctx, csp)
    // Always asked again: the names of the bundle it points at change with each build.
    ctx.set('Cache-Control', 'no-cache')
    ctx.type = 'text/html; charset=utf-8'
    ctx.body = consoleHtml(m, opts.title)
  }
  return Object.assign(mw, { bundle })
}
