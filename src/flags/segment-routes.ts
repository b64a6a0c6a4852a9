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
import { versionOf } from './store/flag-store.ts'
import { changedMeanwhile, conditionalWrite, guardVersion, ifMatchOf, matches, setEtag, versionedRead, type IfMatch } from './concurrency.ts'

export const SEGMENT_NOT_FOUND = 'Segment not found'

export function segmentsRouter(platform: Platform, cache: FlagCache): Router {
  const router = new Router({ prefix: '/api/v1/projects/:id/segments' })
  const db = platform.db
  const auth = requireApiKey(platform, 'flags')

  const changed = async (projectId: string) => {
    await bumpVersion(db, projectId)
    await cache.changed(projectId)
  }

  /** With If-Match: 404 if the segment is gone, 412 if it is at another version; else the version the write must still find. */
  const expectedVersion = async (projectId: string, name: string, cond: IfMatch | undefined): Promise<number | undefined> => {
    if (!cond) return undefined
    const current = await getSegment(db, projectId, name)
    if (!current) throw notFound(SEGMENT_NOT_FOUND)
    if (!matches(cond, versionOf(current))) throw changedMeanwhile('segment', segmentView(current))
    return guardVersion(cond, versionOf(current))
  }
  const goneOrChanged = async (projectId: string, name: string, expected: number | undefined): Promise<HttpError> => {
    const now = expected === undefined ? null : await getSegment(db, projectId, name)
    return now ? changedMeanwhile('segment', segmentView(now)) : notFound(SEGMENT_NOT_FOUND)
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
    setEtag(ctx, versionOf(r.segment))
    ctx.body = segmentView(r.segment)
  })

  router.get('/:name', versionedRead, auth, validate(segmentPathSchema), async (ctx) => {
    const { params } = input(ctx, segmentPathSchema)
    const p = await ownProject(db, ctx, params.id)
    const s = await getSegment(db, p._id, params.name)
    if (!s) throw notFound(SEGMENT_NOT_FOUND)
    setEtag(ctx, versionOf(s))
    ctx.body = segmentView(s)
  })

  router.put('/:name', conditionalWrite('segment'), auth, validate(updateSegmentSchema), async (ctx) => {
    const { params, body } = input(ctx, updateSegmentSchema)
    const cond = ifMatchOf(ctx)
    const p = await ownProject(db, ctx, params.id)
    if (body.name !== undefined && body.name !== params.name) throw badRequest('name cannot be changed')
    const expected = await expectedVersion(p._id, params.name, cond)
    const update = () => updateSegment(db, p._id, params.name, { description: body.description, conditions: body.conditions as Condition[] | undefined }, expected)
    const s = await recordChange(platform, ctx, { project_id: p._id, kind: 'segment', target: params.name }, update, segmentState)
    if (!s) throw await goneOrChanged(p._id, params.name, expected)
    await changed(p._id)
    setEtag(ctx, versionOf(s))
    ctx.body = segmentView(s)
  })

  router.delete('/:name', conditionalWrite('segment'), auth, validate(segmentPathSchema), async (ctx) => {
    const { params } = input(ctx, segmentPathSchema)
    const cond = ifMatchOf(ctx)
    const p = await ownProject(db, ctx, params.id)
    const expected = await expectedVersion(p._id, params.name, cond)
    const users = await flagsUsingSegment(db, p._id, params.name)
    if (users.length > 0) {
      throw new HttpError(409, `Segment "${params.name}" is used by ${users.length === 1 ? 'flag' : 'flags'}: ${users.join(', ')}`, {}, { flags: users })
    }
    const remove = () => deleteSegment(db, p._id, params.name, expected)
    if (!(await recordChange(platform, ctx, { project_id: p._id, kind: 'segment', target: params.name }, remove, (ok) => (ok ? null : undefined)))) throw await goneOrChanged(p._id, params.name, expected)
    await changed(p._id)
    ctx.status = 204
  })

  return router
}
