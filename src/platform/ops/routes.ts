// The operations endpoints every service (and a worker process, when WORKER_PORT is set) serves at
// its host root: /healthz, /readyz, /metrics, and for APIs /openapi.json, /docs and the
// /admin/queues dashboard.
import Router from '@koa/router'
import type Koa from 'koa'
import type { JobDefinition } from '../queue/job.ts'
import type { Platform } from '../platform.ts'
import { requireAdmin } from './admin-auth.ts'
import { adminDashboard } from './bull-board.ts'
import { serveDocsAsset, serveDocsPage } from './docs-page.ts'
import { readiness } from './health.ts'
import { installMetricHooks, registry } from './metrics.ts'
import { buildOpenApi } from './openapi.ts'
import { exportQueueDepth } from './queue-depth.ts'
import { exportQueueSignal } from './queue-signal.ts'

export interface OpsOptions {
  service: string
  /** Every job definition: readiness checks that their schedulers exist; the dashboard and
   * queue-depth metrics list their queues. */
  jobs: JobDefinition[]
  /** API services get docs and the dashboard; a worker process only health and metrics. */
  api?: { basePath: string }
  /** Queues whose jobs this service's requests wait for: /readyz needs a live worker on each. */
  awaits?: string[]
}

function opsRouter(platform: Platform, app: Koa, opts: OpsOptions): Router {
  const router = new Router()
  router.get('/healthz', (ctx) => {
    ctx.set('Cache-Control', 'no-store')
    ctx.body = { status: 'ok' }
  })
  router.get('/readyz', async (ctx) => {
    const r = await readiness(platform, opts.jobs, opts.awaits)
    ctx.set('Cache-Control', 'no-store')
    ctx.status = r.ready ? 200 : 503
    ctx.body = { status: r.ready ? 'ready' : 'not ready', checks: r.checks }
  })
  router.get('/metrics', async (ctx) => {
    // Without ADMIN_TOKEN metrics are open (local use); with it, scrapers present the token.
    if (platform.config.ADMIN_TOKEN) requireAdmin(ctx, platform.config.ADMIN_TOKEN)
    ctx.type = registry.contentType
    ctx.set('Cache-Control', 'no-store')
    ctx.body = await registry.metrics()
  })
  const api = opts.api
  if (api) {
    let doc: Record<string, unknown> | null = null
    router.get('/openapi.json', (ctx) => {
      // Built on first request, when every router of the app is complete.
      doc ??= buildOpenApi(app, { service: opts.service, basePath: api.basePath })
      ctx.body = doc
    })
    router.get('/docs', (ctx) => serveDocsPage(ctx, opts.service))
    router.get('/docs/:asset', (ctx, next) => (serveDocsAsset(ctx, ctx.params.asset!) ? undefined : next()))
  }
  return router
}

/** Add the ops endpoints after the app's own routes (they only answer paths nothing else took). */
export function mountOps(app: Koa, platform: Platform, opts: OpsOptions): Koa {
  installMetricHooks()
  const queues = opts.jobs.map((j) => j.queue)
  if (platform.config.QUEUE_METRICS) exportQueueDepth(platform, queues)
  // Every process serving /metrics is a candidate; one lease holder system-wide exports it.
  exportQueueSignal(platform, queues)
  if (opts.api) app.use(adminDashboard(platform, queues))
  const router = opsRouter(platform, app, opts)
  app.use(router.routes()).use(router.allowedMethods())
  return app
}
