// A service's Koa app, built the same way for every service: the HTTP kit (request ids, JSON
// errors, body parsing), the service's own middleware and routers, then the billing routes every
// service shares. The Stripe webhook verifies a signature over the exact bytes, so its path is
// left unparsed here, next to the routes that mount it.
import type Router from '@koa/router'
import type Koa from 'koa'
import { BILLING_RAW_PATHS, billingRouter } from './billing/billing-routes.ts'
import type { Service } from './plans.ts'
import { createApp } from './http/app.ts'
import type { HotRoute } from './http/hot-route.ts'
import type { Platform } from './platform.ts'

export interface ServiceAppOptions {
  service: Service
  /** Max JSON body size (e.g. '1mb'). */
  jsonLimit?: string
  /** Paths whose body the route reads itself (raw captures, NDJSON batches, OFREP). */
  rawPath?: (path: string) => boolean
  /** Routes answered ahead of every other middleware (see http/hot-route.ts). */
  hotRoutes?: HotRoute[]
  /** Middleware before the body is parsed, so what it adds (CORS headers) is on every answer. */
  beforeBody?: Koa.Middleware[]
  /** Middleware that runs before the routers (e.g. the capture of /hook/ paths). */
  middleware?: Koa.Middleware[]
  routers: Router[]
}

export function createServiceApp(platform: Platform, opts: ServiceAppOptions): Koa {
  const custom = opts.rawPath ?? (() => false)
  const app = createApp({
    service: opts.service,
    jsonLimit: opts.jsonLimit,
    trustProxy: platform.config.TRUST_PROXY,
    rawPath: (p) => BILLING_RAW_PATHS.includes(p) || custom(p),
    hotRoutes: opts.hotRoutes,
    beforeBody: opts.beforeBody,
  })
  for (const mw of opts.middleware ?? []) app.use(mw)
  for (const router of [...opts.routers, billingRouter(platform, opts.service)]) app.use(router.routes()).use(router.allowedMethods())
  return app
}
