// The fonts of the queue dashboard, served by us. Bull Board's page links IBM Plex from
// fonts.googleapis.com, a request off the host on every visit (no page may make one:
// docs/operations.md, "The admin token (decisions)"): the page's HTML gets that link swapped
// for one CSS file built from the @fontsource packages (the same font files, under the same OFL
// licence) and its woff2/woff files are served from node_modules.
import { existsSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import type { Context } from 'koa'

const require = createRequire(import.meta.url)
const PACKAGES = { 'ibm-plex-sans': ['400', '500', '600'], 'ibm-plex-mono': ['400', '500'] } as const
type FontPackage = keyof typeof PACKAGES
const dirOf = (pkg: FontPackage) => dirname(require.resolve(`@fontsource/${pkg}/package.json`))

let css: string | null = null
/** Every weight the dashboard asks Google for, with url(./files/x) made relative to <base>/fonts.css. */
function fontsCss(): string {
  css ??= Object.entries(PACKAGES)
    .flatMap(([pkg, weights]) =>
      weights.map((w) => readFileSync(join(dirOf(pkg as FontPackage), `${w}.css`), 'utf8').replaceAll('url(./files/', `url(${pkg}/`)),
    )
    .join('\n')
  return css
}

/** Off-host stylesheet links (Google Fonts) in the dashboard's HTML, replaced by ours. */
export function localiseFonts(html: string, cssHref: string): string {
  const without = html.replace(/<link\b[^>]*\bhref="https?:\/\/[^"]*"[^>]*>\s*/gi, '')
  return without.replace('</head>', `<link href="${cssHref}" rel="stylesheet">\n</head>`)
}

/**
 * Serves `<dir>/fonts.css` and `<dir>/<package>/<file>.woff2|woff` for a request path below the
 * fonts directory (`rest`); returns false when rest names nothing of ours.
 */
export function serveFont(ctx: Context, rest: string): boolean {
  if (rest === 'fonts.css') {
    ctx.type = 'text/css; charset=utf-8'
    ctx.set('Cache-Control', 'public, max-age=86400')
    ctx.body = fontsCss()
    return true
  }
  const m = /^([a-z-]+)\/([a-z0-9-]+\.woff2?)$/.exec(rest)
  if (!m || !Object.hasOwn(PACKAGES, m[1]!)) return false
  const file = join(dirOf(m[1] as FontPackage), 'files', m[2]!)
  if (!existsSync(file)) return false
  ctx.type = m[2]!.endsWith('.woff2') ? 'font/woff2' : 'font/woff'
  ctx.set('Cache-Control', 'public, max-age=31536000, immutable')
  ctx.body = readFileSync(file)
  return true
}
