// Bull Board (the queue dashboard) at /admin/queues for every queue, with retry/clean actions.
// Off (404) unless ADMIN_TOKEN is configured; every dashboard path, assets included, needs it.
// Its fonts are served from here too (bull-board-fonts.ts), and its page has a CSP of 'self'.
import { createRequire } from 'node:module'
import type { createBullBoard as CreateBullBoard } from '@bull-board/api'
import type { BullMQAdapter as BullMQAdapterClass } from '@bull-board/api/bullMQAdapter'
import type { KoaAdapter as KoaAdapterClass } from '@bull-board/koa'
import type { Middleware } from 'koa'
import type { Platform } from '../platform.ts'
import { requireAdmin } from './admin-auth.ts'
import { localiseFonts, serveFont } from './bull-board-fonts.ts'

export const ADMIN_BASE = '/admin/queues'
const FONTS = `${ADMIN_BASE}/fonts/`

/** A backstop: whatever a future Bull Board adds, the browser loads nothing from another host. */
export const ADMIN_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ')

// Bull Board is loaded only where the dashboard is on: it cost every API process ~0.7 s of CPU at
// start. Through require (the packages are CommonJS), so every process shares one copy of them.
const load = createRequire(import.meta.url)

export function adminDashboard(platform: Platform, queues: string[]): Middleware {
  const token = platform.config.ADMIN_TOKEN
  if (!token) return (_ctx, next) => next()
  const { createBullBoard } = load('@bull-board/api') as { createBullBoard: typeof CreateBullBoard }
  const { BullMQAdapter } = load('@bull-board/api/bullMQAdapter') as { BullMQAdapter: typeof BullMQAdapterClass }
  const { KoaAdapter } = load('@bull-board/koa') as { KoaAdapter: typeof KoaAdapterClass }
  const adapter = new KoaAdapter().setBasePath(ADMIN_BASE)
  createBullBoard({
    queues: queues.map((name) => new BullMQAdapter(platform.queues.queue(name))),
    // @bull-board/koa pins its own copy of @bull-board/api; the shapes agree at runtime.
    serverAdapter: adapter as unknown as Parameters<typeof createBullBoard>[0]['serverAdapter'],
    options: { uiConfig: { boardTitle: 'queueworks' } },
  })
  const board = adapter.registerPlugin() as unknown as Middleware
  return async (ctx, next) => {
    if (ctx.path !== ADMIN_BASE && !ctx.path.startsWith(`${ADMIN_BASE}/`)) return next()
    requireAdmin(ctx, token)
    // One metrics label for the whole dashboard (its inner routes are not ours).
    ctx.state.route = `${ADMIN_BASE}/*`
    if (ctx.path.startsWith(FONTS) && ctx.method === 'GET' && serveFont(ctx, ctx.path.slice(FONTS.length))) return
    await board(ctx, next)
    // No page may make a request off the host: the dashboard's Google Fonts link is served locally.
    if (typeof ctx.body === 'string' && ctx.response.is('html')) {
      ctx.body = localiseFonts(ctx.body, `${FONTS}fonts.css`)
      ctx.set('Content-Security-Policy', ADMIN_CSP)
    }
  }
}
