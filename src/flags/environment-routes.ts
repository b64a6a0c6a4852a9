// Environments of a project: GET/POST /api/v1/projects/{id}/environments and
// POST /api/v1/projects/{id}/environments/{name}/sdk-key/rotate, PATCH (rename) and DELETE of
// /api/v1/projects/{id}/environments/{name} (not production). Each environment has its own SDK
// key (shown once); `production` is the project's own key (rotated by /sdk-key/rotate). Flags'
// definitions are shared; their enabled state, rules and default are per environment
// (`?environment=` on the flag endpoints). POST /api/v1/projects/{id}/environments/{name}/server-key/rotate
// makes (or replaces) the environment's server SDK key, production included: the only key that
// reads the whole flag set (sdk/flag-set-routes.ts); DELETE …/{name}/server-key revokes it.
import Router from '@koa/router'
import type { Context } from 'koa'
import { z } from 'zod'
import { accountOf, requireApiKey } from '../platform/http/auth.ts'
import { conflict, HttpError, notFound } from '../platform/http/errors.ts'
import { atField, input, validate } from '../platform/http/validate.ts'
import type { Platform } from '../platform/platform.ts'
import type { FlagCache } from './sdk/flag-cache.ts'
import { ENVIRONMENT_LIMITS, environmentLimit } from './plan-limits.ts'
import { addEnvironment, environmentNames, getProject, PRODUCTION, revokeServerKey, rotateEnvironmentKey, rotateServerKey, serverKeyHint, type ProjectDoc } from './store/project-store.ts'
import { clearEnvironmentStates, deleteEnvironment, renameEnvironment, type EnvironmentChange } from './store/environment-changes.ts'
import { projectParams, projectPathSchema } from './flag-schema.ts'
import { recordChange } from './changes/audit.ts'
import { ownProject, PROJECT_NOT_FOUND } from './own-project.ts'
import { environmentState, sdkKeyState } from './changes/change-state.ts'
import { deleteWebhooksOfEnvironment, renameWebhooksEnvironment } from './changes/change-hook-store.ts'

export const ENVIRONMENT_NAME_RE = /^[a-z0-9][a-z0-9_-]{0,31}$/

const environmentName = z
  .string({ error: (i) => (i.input === undefined ? atField('is required') : atField('must be a string')) })
  .regex(ENVIRONMENT_NAME_RE, { error: atField('must be 1-32 characters of lowercase letters, digits, "_" and "-"') })
const createEnvironmentSchema = z.object({
  params: projectParams,
  body: z.strictObject({ name: environmentName }),
})
const environmentParams = z.object({ id: z.string(), name: z.string() })
const environmentPathSchema = z.object({ params: environmentParams })
const renameEnvironmentSchema = z.object({ params: environmentParams, body: z.strictObject({ name: environmentName }) })

const PRODUCTION_FIXED = 'The production environment cannot be renamed or deleted: the project\'s own SDK key and the flag endpoints without ?environment= act on it'

/** The HTTP answer of a refused rename or delete. */
function refusal(r: Exclude<EnvironmentChange, { ok: true }>, to?: string): HttpError {
  switch (r.reason) {
    case 'project_not_found':
      return notFound(PROJECT_NOT_FOUND)
    case 'not_found':
      return notFound('Environment not found')
    case 'production':
      return conflict(PRODUCTION_FIXED)
    case 'exists':
      return conflict(`An environment named "${to}" already exists in this project`)
  }
}

const envView = (p: ProjectDoc, name: string) => environmentsView(p).find((e) => e.name === name)!

function environmentsView(p: ProjectDoc) {
  return [
    { name: PRODUCTION, sdk_key_hint: p.sdk_key_hint, server_key_hint: p.server_key_hint ?? null, created_at: p.created_at.toISOString() },
    ...(p.environments ?? []).map((e) => ({ name: e.name, sdk_key_hint: e.sdk_key_hint, server_key_hint: e.server_key_hint ?? null, created_at: e.created_at.toISOString() })),
  ]
}

export function environmentsRouter(platform: Platform, cache: FlagCache): Router {
  const router = new Router({ prefix: '/api/v1/projects/:id/environments' })
  const db = platform.db
  const auth = requireApiKey(platform, 'flags')

  router.get('/', auth, validate(projectPathSchema), async (ctx) => {
    const { params } = input(ctx, projectPathSchema)
    const p = await ownProject(db, ctx, params.id)
    ctx.body = { environments: environmentsView(p) }
  })

  router.post('/', auth, validate(createEnvironmentSchema), async (ctx) => {
    const account = accountOf(ctx)
    const { params, body } = input(ctx, createEnvironmentSchema)
    // Flag states left under this name by an environment deleted or renamed in a step that failed
    // halfway (environment-changes.ts) must not become the new environment's rules.
    const p = await ownProject(db, ctx, params.id)
    if (!environmentNames(p).includes(body.name)) await clearEnvironmentStates(db, p._id, body.name)
    const r = await recordChange(platform, ctx, { project_id: params.id, kind: 'environment', target: body.name }, () => addEnvironment(db, account._id, params.id, body.name, ENVIRONMENT_LIMITS[account.plan]), (r) => (r.ok ? environmentState(r.project, body.name) : undefined))
    if (!r.ok) {
      if (r.reason === 'not_found') throw notFound(PROJECT_NOT_FOUND)
      throw r.reason === 'exists' ? conflict(`An environment named "${body.name}" already exists in this project`) : environmentLimit(account.plan)
    }
    await cache.changed(r.project._id)
    const env = r.project.environments!.find((e) => e.name === body.name)!
    ctx.status = 201
    ctx.body = { name: env.name, sdk_key: r.sdkKey, sdk_key_hint: env.sdk_key_hint, created_at: env.created_at.toISOString() }
  })

  router.post('/:name/sdk-key/rotate', auth, validate(environmentPathSchema), async (ctx) => {
    const { params } = input(ctx, environmentPathSchema)
    const r = await recordChange(platform, ctx, { project_id: params.id, kind: 'sdk_key', target: params.name }, () => rotateEnvironmentKey(db, accountOf(ctx)._id, params.id, params.name), (r) => (r ? sdkKeyState(r.project, params.name) : undefined))
    if (!r) throw notFound(params.name === PRODUCTION ? 'Rotate production\'s key with POST /api/v1/projects/{id}/sdk-key/rotate' : 'Environment not found')
    await cache.changed(r.project._id, { keys: true })
    const env = r.project.environments!.find((e) => e.name === params.name)!
    ctx.body = { name: env.name, sdk_key: r.sdkKey, sdk_key_hint: env.sdk_key_hint, created_at: env.created_at.toISOString() }
  })

  // A server key is made on first call and replaced after; the old one stops working on every
  // replica within about 1 s (as a rotated SDK key). Shown once.
  router.post('/:name/server-key/rotate', auth, validate(environmentPathSchema), async (ctx) => {
    const { params } = input(ctx, environmentPathSchema)
    const r = await recordChange(platform, ctx, { project_id: params.id, kind: 'sdk_key', target: params.name }, () => rotateServerKey(db, accountOf(ctx)._id, params.id, params.name), (r) => (r ? sdkKeyState(r.project, params.name) : undefined))
    if (!r) throw notFound((await getProject(db, accountOf(ctx)._id, params.id)) ? 'Environment not found' : PROJECT_NOT_FOUND)
    await cache.changed(r.project._id, { keys: true })
    ctx.body = { name: params.name, server_key: r.serverKey, server_key_hint: serverKeyHint(r.project, params.name) }
  })

  // Revoke: the server key stops working on every replica within about 1 s (the client-side SDK
  // key cannot be removed, only rotated: every environment keeps one). Idempotent.
  router.delete('/:name/server-key', auth, validate(environmentPathSchema), async (ctx) => {
    const { params } = input(ctx, environmentPathSchema)
    const revoke = () => revokeServerKey(db, accountOf(ctx)._id, params.id, params.name)
    const p = await recordChange(platform, ctx, { project_id: params.id, kind: 'sdk_key', target: params.name }, revoke, (p) => (p ? sdkKeyState(p, params.name) : undefined))
    if (!p) throw notFound((await getProject(db, accountOf(ctx)._id, params.id)) ? 'Environment not found' : 'Project not found')
    await cache.changed(p._id, { keys: true })
    ctx.status = 204
  })

  // Rename: the SDK key stays the same and now evaluates under the new name; flag states move with it.
  const rename = async (ctx: Context) => {
    const { params, body } = input(ctx, renameEnvironmentSchema)
    // Recorded under the old name, its state after naming the new one (a diff of `/name`).
    const r = await recordChange(platform, ctx, { project_id: params.id, kind: 'environment', target: params.name }, async () => {
      const r = await renameEnvironment(db, accountOf(ctx)._id, params.id, params.name, body.name)
      // Its change webhooks follow it, within the same recorded change.
      if (r.ok && body.name !== params.name) await renameWebhooksEnvironment(db, r.project._id, params.name, body.name)
      return r
    }, (r) => {
      const after = r.ok ? environmentState(r.project, body.name) : null
      return after ?? undefined
    })
    if (!r.ok) throw refusal(r, body.name)
    // Cached keys name the environment they evaluate: they are dropped with the project.
    await cache.changed(r.project._id, { keys: true })
    ctx.body = envView(r.project, body.name)
  }
  router.patch('/:name', auth, validate(renameEnvironmentSchema), rename)
  router.put('/:name', auth, validate(renameEnvironmentSchema), rename)

  // Delete: its SDK key stops working on every replica within about 1 s, and its flag states go.
  router.delete('/:name', auth, validate(environmentPathSchema), async (ctx) => {
    const { params } = input(ctx, environmentPathSchema)
    const r = await recordChange(platform, ctx, { project_id: params.id, kind: 'environment', target: params.name }, async () => {
      const r = await deleteEnvironment(db, accountOf(ctx)._id, params.id, params.name)
      // Its change webhooks go with it (their plan slots are free again).
      if (r.ok) await deleteWebhooksOfEnvironment(db, r.project._id, params.name)
      return r
    }, (r) => (r.ok ? null : undefined))
    if (!r.ok) throw refusal(r)
    await cache.changed(r.project._id, { keys: true })
    ctx.status = 204
  })

  return router
}
