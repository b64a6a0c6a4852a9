// Audit history: GET /api/v1/projects/{id}/flags/{key}/history (one flag's changes, also after it
// was deleted) and GET /api/v1/projects/{id}/history (the project-wide feed, filterable by kind
// and type). Newest first, `limit` per page, `before` = the previous page's `next_before`.
import Router from '@koa/router'
import { z } from 'zod'
import { requireApiKey } from '../platform/http/auth.ts'
import { notFound } from '../platform/http/errors.ts'
import { atField, input, validate } from '../platform/http/validate.ts'
import type { Platform } from '../platform/platform.ts'
import { CHANGE_KINDS } from './changes/change-state.ts'
import { getFlag } from './store/flag-store.ts'
import { entryView, listEntries, type HistoryDoc } from './changes/history-store.ts'
import { ownProject } from './own-project.ts'
import { projectParams } from './flag-schema.ts'
import { cursor, pageLimit } from './change-hook-schema.ts'

const TYPES = CHANGE_KINDS.flatMap((k) => (k === 'sdk_key' ? ['sdk_key.rotated', 'sdk_key.revoked'] : [`${k}.created`, `${k}.updated`, `${k}.deleted`]))

const flagHistorySchema = z.object({
  params: projectParams.extend({ key: z.string().max(128) }),
  query: z.object({ limit: pageLimit, before: cursor.optional() }),
})
const projectHistorySchema = z.object({
  params: projectParams,
  query: z.object({
    limit: pageLimit,
    before: cursor.optional(),
    kind: z.enum(CHANGE_KINDS, { error: atField(`must be one of: ${CHANGE_KINDS.join(', ')}`) }).optional(),
    type: z.enum(TYPES as [string, ...string[]], { error: atField(`must be one of: ${TYPES.join(', ')}`) }).optional(),
  }),
})

function page(docs: HistoryDoc[], limit: number) {
  return { history: docs.map(entryView), next_before: docs.length === limit ? docs.at(-1)!._id : null }
}

export function historyRouter(platform: Platform): Router {
  const router = new Router({ prefix: '/api/v1/projects/:id' })
  const db = platform.db
  const auth = requireApiKey(platform, 'flags')


  router.get('/flags/:key/history', auth, validate(flagHistorySchema), async (ctx) => {
    const { params, query } = input(ctx, flagHistorySchema)
    const p = await ownProject(db, ctx, params.id)
    const docs = await listEntries(db, p._id, { ...query, kind: 'flag', target: params.key })
    // A key that never had a flag (no entry on the first page and no flag) is unknown.
    if (docs.length === 0 && !query.before && !(await getFlag(db, p._id, params.key))) throw notFound('Flag not found')
    ctx.body = page(docs, query.limit)
  })

  router.get('/history', auth, validate(projectHistorySchema), async (ctx) => {
    const { params, query } = input(ctx, projectHistorySchema)
    const p = await ownProject(db, ctx, params.id)
    ctx.body = page(await listEntries(db, p._id, query), query.limit)
  })

  return router
}
