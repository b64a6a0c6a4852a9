// GET /api/v1/projects/{id}/flags/{key}/usage: how often a flag was evaluated, to which variant,
// and where (`service`: OFREP and /evaluate; `in_process`: what in-process providers reported),
// per hour (the last `hours`, default 24, at most 24 × 31) or per day (the last `days`, default 7,
// at most 90, the retention). Periods are UTC; counts arrive in the period they reach the store
// (the service flushes every few seconds, providers every minute by default). Only periods with
// counts are listed; `totals` sums the whole window.
import Router from '@koa/router'
import { z } from 'zod'
import { requireApiKey } from '../platform/http/auth.ts'
import { notFound } from '../platform/http/errors.ts'
import { input, validate } from '../platform/http/validate.ts'
import type { Platform } from '../platform/platform.ts'
import { clock } from '../platform/clock.ts'
import { ENVIRONMENT_NOT_FOUND } from './flag-routes.ts'
import { flagParams } from './flag-schema.ts'
import { getFlag } from './store/flag-store.ts'
import { environmentNames, PRODUCTION } from './store/project-store.ts'
import { ownProject } from './own-project.ts'
import { decodeVariant, HOUR_MS, readUsage, USAGE_RETENTION_DAYS, type UsageDoc } from './store/usage-store.ts'

const DAY_MS = 24 * HOUR_MS
const usageSchema = z.object({
  params: flagParams,
  query: z.strictObject({
    environment: z.string().max(64).optional(),
    period: z.enum(['hour', 'day']).default('hour'),
    hours: z.coerce.number().int().min(1).max(24 * 31).optional(),
    days: z.coerce.number().int().min(1).max(USAGE_RETENTION_DAYS).optional(),
  }),
})

type Counts = { service: number; in_process: number; variants: Record<string, { service: number; in_process: number }> }
// Variants by name without a prototype: "__proto__" and "constructor" are names a split accepts,
// and on a plain object `variants[name] ??= …` would find Object.prototype's members instead.
const empty = (): Counts => ({ service: 0, in_process: 0, variants: Object.create(null) })

function add(c: Counts, d: UsageDoc): void {
  for (const source of ['service', 'in_process'] as const) {
    for (const [v, n] of Object.entries(d[source] ?? {})) {
      const name = decodeVariant(v)
      const slot = (c.variants[name] ??= { service: 0, in_process: 0 })
      slot[source] += n
      c[source] += n
    }
  }
}

export function flagUsageRouter(platform: Platform): Router {
  const router = new Router({ prefix: '/api/v1' })
  const db = platform.db
  const auth = requireApiKey(platform, 'flags')

  router.get('/projects/:id/flags/:key/usage', auth, validate(usageSchema), async (ctx) => {
    const { params, query } = input(ctx, usageSchema)
    const p = await ownProject(db, ctx, params.id)
    const environment = query.environment ?? PRODUCTION
    if (!environmentNames(p).includes(environment)) throw notFound(ENVIRONMENT_NOT_FOUND)
    if (!(await getFlag(db, p._id, params.key))) throw notFound('Flag not found')
    const size = query.period === 'hour' ? HOUR_MS : DAY_MS
    const count = query.period === 'hour' ? (query.hours ?? 24) : (query.days ?? 7)
    const to = Math.floor(clock.nowMs() / size) * size + size
    const from = to - count * size
    const docs = await readUsage(db, p._id, environment, params.key, new Date(from), new Date(to))
    const periods = new Map<number, Counts>()
    const totals = empty()
    for (const d of docs) {
      const start = Math.floor(d.period_start.getTime() / size) * size
      let c = periods.get(start)
      if (!c) periods.set(start, (c = empty()))
      add(c, d)
      add(totals, d)
    }
    ctx.body = {
      flag: params.key,
      environment,
      period: query.period,
      from: new Date(from).toISOString(),
      to: new Date(to).toISOString(),
      totals,
      periods: [...periods].map(([start, c]) => ({ start: new Date(start).toISOString(), ...c })),
    }
  })

  return router
}
