// Segments of a project: GET/POST /api/v1/projects/{id}/segments and GET/PUT/DELETE
// /api/v1/projects/{id}/segments/{name}. A change bumps the project's version and is published,
// so every replica recompiles the flags that use the segment within 1 s (flag-cache.ts). A
// segment that rules still reference cannot be deleted: 409 naming the flags.
import Router from '@koa/router'
import { accountOf, requireApiKey } from '../platform/http/auth.ts'
import { badRequest, conflict, HttpError, notFound } from '../platform/http/errors.ts'
import { input, validate } from '../platform/http/validate.ts'
import type { Platform } from '../platform/platform.ts'
import type { FlagCache } from './sdk/flag-cache.ts'
import { flagsUsingSegment } from './store/flag-store.ts'
import type { Condition } from './engine/operators.ts'
import { SEGMENT_LIMITS, segmentLimit } from './plan-limits.ts'
import { bumpVersion } from './store/project-store.ts'
import { ownProject } from './own-project.ts'
import { recordChange } from './changes/audit.ts'
import { segmentState } from './changes/change-state.ts'
import { projectPathSchema } from './flag-schema.ts'
import { createSegmentSchema, segmentPathSchema, updateSegmentSchema } from './segment-schema.ts'
import { createSegment, deleteSegment, getSegment, listSegments, segmentView, updateSegment } from './store/segment-store.ts'

export const SEGMENT_NOT_FOUND = 'Segment not found'

export function segmentsRouter(platform: Platform, cache: FlagCache): Router {
  const router = new Router({ prefix: '/api/v1/projects/:id/segments' })
  const db = platform.db
  const auth = requireApiKey(platform, 'flags')

  const changed = async (projectId: string) => {
    await bumpVersion(db, projectId)
    await cache.changed(projectId)
  }

  router.get('/', auth, validate(projectPathSchema), async (ctx) => {
    const { params } = input(ctx, projectPathSchema)
    const p = await ownProject(db, ctx, params.id)
    ctx.body = { segments: (await listSegments(db, p._id)).map(segmentView) }
  })

  router.post('/', auth, validate(createSegmentSchema), async (ctx) => {
    const account = accountOf(ctx)
    const { params, body } = input(ctx, createSegmentSchema)
    const p = await ownProject(db, ctx, params.id)
    const create = () => createSegment(db, p._id, { ...body, conditions: body.conditions as Condition[] }, SEGMENT_LIMITS[account.plan])
    const r = await recordChange(platform, ctx, { project_id: p._id, kind: 'segment', target: body.name }, create, (r) => (r.ok ? segmentState(r.segment) : undefined))
    if (!r.ok) throw r.reason === 'exists' ? conflict(`A segment named "${body.name}" already exists in this project`) : segmentLimit(account.plan)
    await changed(p._id)
    ctx.status = 201
    ctx.body = segmentView(r.segment)
  })

  router.get('/:name', auth, validate(segmentPathSchema), async (ctx) => {
    const { params } = input(ctx, segmentPathSchema)
    const p = await ownProject(db, ctx, params.id)
    const s = await getSegment(db, p._id, params.name)
    if (!s) throw notFound(SEGMENT_NOT_FOUND)
    ctx.body = segmentView(s)
  })

  router.put('/:name', auth, validate(updateSegmentSchema), async (ctx) => {
    const { params, body } = input(ctx, updateSegmentSchema)
    const p = await ownProject(db, ctx, params.id)
    if (body.name !== undefined && body.name !== params.name) throw badRequest('name cannot be changed')
    const update = () => updateSegment(db, p._id, params.name, { description: body.description, conditions: body.conditions as Condition[] | undefined })
    const s = await recordChange(platform, ctx, { project_id: p._id, kind: 'segment', target: params.name }, update, segmentState)
    if (!s) throw notFound(SEGMENT_NOT_FOUND)
    await changed(p._id)
    ctx.body = segmentView(s)
  })

  router.delete('/:name', auth, validate(segmentPathSchema), async (ctx) => {
    const { params } = input(ctx, segmentPathSchema)
    const p = await ownProject(db, ctx, params.id)
    const users = await flagsUsingSegment(db, p._id, params.name)
    if (users.length > 0) {
      throw new HttpError(409, `Segment "${params.name}" is used by ${users.length === 1 ? 'flag' : 'flags'}: ${users.join(', ')}`, {}, { flags: users })
    }
    const remove = () => deleteSegment(db, p._id, params.name)
    if (!(await recordChange(platform, ctx, { project_id: p._id, kind: 'segment', target: params.name }, remove, (ok) => (ok ? null : undefined)))) throw notFound(SEGMENT_NOT_FOUND)
    await changed(p._id)
    ctx.status = 204
  })

  return router
}
