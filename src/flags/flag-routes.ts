// The management API (docs/flags.md, "Endpoints"): signup, projects (with SDK-key rotation) and
// flags. Every
// change of a project's flags bumps its version and is published to every API replica's cache.
import Router from '@koa/router'
import type { Context } from 'koa'
import { createAccount, signupSchema } from '../platform/accounts.ts'
import { FLAGS_LIMITS, type Plan } from '../platform/plans.ts'
import { accountOf, requireApiKey } from '../platform/http/auth.ts'
import { badRequest, HttpError, notFound, conflict } from '../platform/http/errors.ts'
import { input, validate } from '../platform/http/validate.ts'
import type { Platform } from '../platform/platform.ts'
import type { FlagCache } from './sdk/flag-cache.ts'
import { typeIssue } from './engine/flag-types.ts'
import { createFlag, deleteFlag, flagView, getFlag, listFlags, segmentsOf, stateIn, updateFlag, versionOf } from './store/flag-store.ts'
import { changedMeanwhile, conditionalWrite, guardVersion, ifMatchOf, matches, setEtag, versionedRead } from './concurrency.ts'
import { allocateSplits } from './engine/variant-allocation.ts'
import { lastEvaluatedIn } from './store/usage-store.ts'
import { deleteProject } from './project-delete.ts'
import { missingSegments } from './store/segment-store.ts'
import { recordChange } from './changes/audit.ts'
import { ownProject, PROJECT_NOT_FOUND } from './own-project.ts'
import { flagState, projectState, sdkKeyState } from './changes/change-state.ts'
import { environmentNames, PRODUCTION } from './store/project-store.ts'
import { bumpVersion, createProject, getProject, listProjects, projectView, rotateSdkKey, settingsVersionOf, updateProject, type ProjectDoc } from './store/project-store.ts'
import {
  createFlagSchema,
  createProjectSchema,
  flagPathSchema,
  listFlagsSchema,
  projectPathSchema,
  updateFlagSchema,
  updateProjectSchema,
} from './flag-schema.ts'

export const FLAG_NOT_FOUND = 'Flag not found'
export const ENVIRONMENT_NOT_FOUND = 'Environment not found'
export const FIRST_PROJECT_NAME = 'Default'

function limitsOf(plan: Plan) {
  return { ...FLAGS_LIMITS[plan] }
}

function projectLimit(plan: Plan): HttpError {
  const max = FLAGS_LIMITS[plan].projects
  return new HttpError(403, `Plan limit reached: the ${plan} plan allows ${max} projects`, {}, { limit: 'projects', max, plan })
}

function flagLimit(plan: Plan): HttpError {
  const max = FLAGS_LIMITS[plan].flags_per_project
  return new HttpError(403, `Plan limit reached: the ${plan} plan allows ${max} flags per project`, {}, { limit: 'flags_per_project', max, plan })
}

export function flagsRouter(platform: Platform, cache: FlagCache): Router {
  const router = new Router({ prefix: '/api/v1' })
  const db = platform.db
  const auth = requireApiKey(platform, 'flags')


  async function changed(projectId: string): Promise<void> {
    await bumpVersion(db, projectId)
    await cache.changed(projectId)
  }

  /** The environment named by `?environment=` (production when absent); 404 if the project has none of that name. */
  function environmentOf(p: ProjectDoc, name: string | undefined): { name: string; named: string | undefined } {
    if (name === undefined) return { name: PRODUCTION, named: undefined }
    if (!environmentNames(p).includes(name)) throw notFound(ENVIRONMENT_NOT_FOUND)
    return { name, named: name }
  }

  /** Why a write guarded by `expected` found nothing: the flag is gone (404) or moved on (412). */
  async function goneOrChanged(projectId: string, key: string, expected: number | undefined, environment?: string): Promise<HttpError> {
    const now = expected === undefined ? null : await getFlag(db, projectId, key)
    return now ? changedMeanwhile('flag', flagView(now, environment)) : notFound(FLAG_NOT_FOUND)
  }

  /** Every segment the rules reference must exist: else a 400 naming the first unknown one. */
  async function requireSegments(projectId: string, rules: { segments?: string[] }[] | undefined): Promise<void> {
    const missing = new Set(await missingSegments(db, projectId, segmentsOf(rules)))
    if (missing.size === 0) return
    for (const [i, r] of (rules ?? []).entries()) {
      for (const [j, s] of (r.segments ?? []).entries()) {
        if (missing.has(s)) throw badRequest(`rules[${i}].segments[${j}] is not a segment of this project ("${s}")`)
      }
    }
  }

  router.post('/signup', validate(signupSchema), async (ctx) => {
    const { body } = input(ctx, signupSchema)
    const { account, apiKey } = await createAccount(db, 'flags', body.email)
    const created = await createProject(db, account._id, FIRST_PROJECT_NAME, FLAGS_LIMITS[account.plan].projects)
    if (!created) throw projectLimit(account.plan) // cannot happen: every plan allows at least one
    ctx.status = 201
    ctx.body = {
      api_key: apiKey,
      sdk_key: created.sdkKey,
      project: projectView(created.project),
      plan: account.plan,
      limits: limitsOf(account.plan),
    }
  })

  router.get('/projects', auth, async (ctx) => {
    const list = await listProjects(db, accountOf(ctx)._id)
    ctx.body = { projects: list.map(projectView) }
  })

  router.post('/projects', auth, validate(createProjectSchema), async (ctx) => {
    const account = accountOf(ctx)
    const { body } = input(ctx, createProjectSchema)
    const created = await createProject(db, account._id, body.name, FLAGS_LIMITS[account.plan].projects, body.allowed_origins)
    if (!created) throw projectLimit(account.plan)
    ctx.status = 201
    ctx.body = { ...projectView(created.project), sdk_key: created.sdkKey }
  })

  router.get('/projects/:id', versionedRead, auth, validate(projectPathSchema), async (ctx) => {
    const { params } = input(ctx, projectPathSchema)
    const p = await ownProject(db, ctx, params.id)
    setEtag(ctx, settingsVersionOf(p))
    ctx.body = projectView(p)
  })

  // Partial update of the project's own settings (name, allowed_origins); PUT is the same, for
  // clients that only speak PUT, as flags are updated with PUT. With If-Match, applied only while
  // the settings are at that version (the console's rename and allowed-origins editor send it).
  const updateOwnProject = async (ctx: Context) => {
    const { params, body } = input(ctx, updateProjectSchema)
    const cond = ifMatchOf(ctx)
    let expected: number | undefined
    if (cond) {
      const current = await ownProject(db, ctx, params.id)
      if (!matches(cond, settingsVersionOf(current))) throw changedMeanwhile('project', projectView(current))
      expected = guardVersion(cond, settingsVersionOf(current))
    }
    const update = () => updateProject(db, accountOf(ctx)._id, params.id, body, expected)
    const p = await recordChange(platform, ctx, { project_id: params.id, kind: 'project', target: params.id }, update, (p) => (p ? projectState(p) : undefined))
    if (!p) {
      // Guarded: the project may have moved on between the check and the write (or be gone).
      const now = expected === undefined ? null : await getProject(db, accountOf(ctx)._id, params.id)
      throw now ? changedMeanwhile('project', projectView(now)) : notFound(PROJECT_NOT_FOUND)
    }
    // Every replica reloads the project's snapshot, which carries its allowed origins.
    await cache.changed(p._id)
    setEtag(ctx, settingsVersionOf(p))
    ctx.body = projectView(p)
  }
  router.patch('/projects/:id', conditionalWrite('project'), auth, validate(updateProjectSchema), updateOwnProject)
  router.put('/projects/:id', conditionalWrite('project'), auth, validate(updateProjectSchema), updateOwnProject)

  // Deletes the project and everything in it (flags, segments, environments and their keys,
  // webhooks, history, usage): the console asks for confirmation naming what is lost.
  router.delete('/projects/:id', auth, validate(projectPathSchema), async (ctx) => {
    const { params } = input(ctx, projectPathSchema)
    if (!(await deleteProject(db, accountOf(ctx)._id, params.id))) throw notFound(PROJECT_NOT_FOUND)
    await cache.changed(params.id, { keys: true })
    ctx.status = 204
  })

  router.post('/projects/:id/sdk-key/rotate', auth, validate(projectPathSchema), async (ctx) => {
    const { params } = input(ctx, projectPathSchema)
    const rotate = async () => (params.id.length <= 64 ? rotateSdkKey(db, accountOf(ctx)._id, params.id) : null)
    const rotated = await recordChange(platform, ctx, { project_id: params.id, kind: 'sdk_key', target: PRODUCTION }, rotate, (r) => (r ? sdkKeyState(r.project, PRODUCTION) : undefined))
    if (!rotated) throw notFound(PROJECT_NOT_FOUND)
    await cache.changed(rotated.project._id, { keys: true })
    ctx.body = { ...projectView(rotated.project), sdk_key: rotated.sdkKey }
  })

  router.get('/projects/:id/flags', auth, validate(listFlagsSchema), async (ctx) => {
    const { params, query } = input(ctx, listFlagsSchema)
    const p = await ownProject(db, ctx, params.id)
    const env = environmentOf(p, query.environment)
    const [list, last] = await Promise.all([listFlags(db, p._id), lastEvaluatedIn(db, p._id, env.name)])
    // When counts of the flag last arrived from this environment (SDKs report within a minute): the console's "stale" filter.
    ctx.body = { flags: list.map((f) => ({ ...flagView(f, env.named), last_evaluated_at: last.get(f.key)?.toISOString() ?? null })) }
  })

  router.post('/projects/:id/flags', auth, validate(createFlagSchema), async (ctx) => {
    const account = accountOf(ctx)
    const { params, query, body } = input(ctx, createFlagSchema)
    const p = await ownProject(db, ctx, params.id)
    const env = environmentOf(p, query.environment)
    await requireSegments(p._id, body.rules)
    const splits = allocateSplits(undefined, body.rules, body.fallthrough)
    const stored = { ...body, rules: splits.rules!, fallthrough: splits.fallthrough ?? undefined }
    const create = () => createFlag(db, p._id, stored, FLAGS_LIMITS[account.plan].flags_per_project, env.name)
    const r = await recordChange(platform, ctx, { project_id: p._id, kind: 'flag', target: body.key }, create, (r) => (r.ok ? flagState(p, r.flag) : undefined))
    if (!r.ok) throw r.reason === 'exists' ? conflict(`A flag with key "${body.key}" already exists in this project`) : flagLimit(account.plan)
    await changed(p._id)
    ctx.status = 201
    setEtag(ctx, versionOf(r.flag))
    ctx.body = flagView(r.flag, env.named)
  })

  router.get('/projects/:id/flags/:key', versionedRead, auth, validate(flagPathSchema), async (ctx) => {
    const { params, query } = input(ctx, flagPathSchema)
    const p = await ownProject(db, ctx, params.id)
    const env = environmentOf(p, query.environment)
    const f = await getFlag(db, p._id, params.key)
    if (!f) throw notFound(FLAG_NOT_FOUND)
    setEtag(ctx, versionOf(f))
    ctx.body = flagView(f, env.named)
  })

  router.put('/projects/:id/flags/:key', conditionalWrite('flag'), auth, validate(updateFlagSchema), async (ctx) => {
    const { params, query, body } = input(ctx, updateFlagSchema)
    const cond = ifMatchOf(ctx)
    const p = await ownProject(db, ctx, params.id)
    const env = environmentOf(p, query.environment)
    if (body.key !== undefined && body.key !== params.key) throw badRequest('key cannot be changed')
    // Values are checked against the stored flag's type, which cannot change.
    const current = await getFlag(db, p._id, params.key)
    if (!current) throw notFound(FLAG_NOT_FOUND)
    if (cond && !matches(cond, versionOf(current))) throw changedMeanwhile('flag', flagView(current, env.named))
    const expected = guardVersion(cond, versionOf(current))
    if (body.type !== undefined && body.type !== current.type) throw badRequest('type cannot be changed')
    const issue = typeIssue(current.type, body)
    if (issue) throw badRequest(issue)
    await requireSegments(p._id, body.rules)
    // Each split keeps its buckets: a change of weights moves only the users it must. Computed from
    // the state read above; a concurrent update in between makes this one count from that older state.
    const splits = allocateSplits(stateIn(current, env.name), body.rules, body.fallthrough)
    const update = () => updateFlag(db, p._id, params.key, { ...body, rules: splits.rules, fallthrough: splits.fallthrough }, env.name, expected)
    const f = await recordChange(platform, ctx, { project_id: p._id, kind: 'flag', target: params.key }, update, (f) => (f ? flagState(p, f) : undefined))
    if (!f) throw await goneOrChanged(p._id, params.key, expected, env.named)
    await changed(p._id)
    setEtag(ctx, versionOf(f))
    ctx.body = flagView(f, env.named)
  })

  router.delete('/projects/:id/flags/:key', conditionalWrite('flag'), auth, validate(flagPathSchema), async (ctx) => {
    const { params } = input(ctx, flagPathSchema)
    const cond = ifMatchOf(ctx)
    const p = await ownProject(db, ctx, params.id)
    let expected: number | undefined
    if (cond) {
      const current = await getFlag(db, p._id, params.key)
      if (!current) throw notFound(FLAG_NOT_FOUND)
      if (!matches(cond, versionOf(current))) throw changedMeanwhile('flag', flagView(current))
      expected = guardVersion(cond, versionOf(current))
    }
    const remove = () => deleteFlag(db, p._id, params.key, expected)
    if (!(await recordChange(platform, ctx, { project_id: p._id, kind: 'flag', target: params.key }, remove, (ok) => (ok ? null : undefined)))) throw await goneOrChanged(p._id, params.key, expected)
    await changed(p._id)
    ctx.status = 204
  })

  return router
}
