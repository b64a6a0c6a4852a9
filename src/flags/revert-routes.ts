// "Revert to this version": POST /api/v1/projects/{id}/flags/{key}/history/{entryId}/revert sets
// the flag back to its state right after that history entry (name, tags, and its state in every
// environment that still exists; environments made since keep theirs), recorded as a new change.
// If-Match is honoured as on PUT. Splits keep their buckets where the weights allow, as on PUT.
// Refused: an entry that deleted the flag (nothing to go back to), a flag since deleted, and a
// state whose rules name a segment deleted since.
import Router from '@koa/router'
import { z } from 'zod'
import { accountOf, requireApiKey } from '../platform/http/auth.ts'
import { conflict, notFound } from '../platform/http/errors.ts'
import { input, validate } from '../platform/http/validate.ts'
import type { Platform } from '../platform/platform.ts'
import { describedAs } from '../platform/ops/openapi.ts'
import type { FlagCache } from './sdk/flag-cache.ts'
import type { Rule, Split } from './engine/rules.ts'
import { allocateSplits } from './engine/variant-allocation.ts'
import { recordChange } from './changes/audit.ts'
import { flagState } from './changes/change-state.ts'
import { getEntry } from './changes/history-store.ts'
import { flagView, getFlag, replaceFlagState, segmentsOf, stateIn, versionOf, type FlagEnvironmentState } from './store/flag-store.ts'
import { missingSegments } from './store/segment-store.ts'
import { bumpVersion, environmentNames, getProject } from './store/project-store.ts'
import { changedMeanwhile, conditionalWrite, ifMatchOf, matches, setEtag } from './concurrency.ts'
import { projectParams } from './flag-schema.ts'

export const revertSchema = z.object({
  params: projectParams.extend({ key: z.string().max(128), entryId: z.string().max(64) }),
})

interface StoredState {
  name: string
  tags?: string[]
  environments: Record<string, { enabled: boolean; default_value: unknown; rules: Rule[]; fallthrough?: Split }>
}

const ATTEMPTS = 3

export function revertRouter(platform: Platform, cache: FlagCache): Router {
  const router = new Router({ prefix: '/api/v1/projects/:id/flags/:key/history' })
  const db = platform.db
  const auth = requireApiKey(platform, 'flags')

  router.post(
    '/:entryId/revert',
    describedAs({ summary: 'Set a flag back to its state after a history entry (recorded as a new change)' }),
    conditionalWrite('flag'),
    auth,
    validate(revertSchema),
    async (ctx) => {
      const { params } = input(ctx, revertSchema)
      const cond = ifMatchOf(ctx)
      const p = await getProject(db, accountOf(ctx)._id, params.id)
      if (!p) throw notFound('Project not found')
      const entry = await getEntry(db, p._id, params.entryId)
      if (!entry || entry.state !== 'committed' || entry.kind !== 'flag' || entry.target !== params.key) throw notFound('History entry not found')
      if (entry.after === null || entry.after === undefined) throw conflict('This change deleted the flag: there is no version after it to go back to')
      const target = entry.after as StoredState
      const envs = environmentNames(p).filter((e) => target.environments[e] !== undefined)
      const wanted = envs.map((e) => target.environments[e]!)
      const missing = await missingSegments(db, p._id, segmentsOf(wanted.flatMap((s) => s.rules)))
      if (missing.length > 0) throw conflict(`Cannot revert: the rules of that version use the segment "${missing[0]}", which no longer exists`)

      for (let attempt = 0; ; attempt++) {
        const current = await getFlag(db, p._id, params.key)
        if (!current) throw notFound('Flag not found')
        if (cond && !matches(cond, versionOf(current))) throw changedMeanwhile('flag', flagView(current))
        const states: FlagEnvironmentState[] = envs.map((name) => {
          const st = target.environments[name]!
          const splits = allocateSplits(stateIn(current, name), st.rules, st.fallthrough ?? null)
          return { name, enabled: st.enabled, default_value: st.default_value, rules: splits.rules ?? [], ...(splits.fallthrough ? { fallthrough: splits.fallthrough } : {}) }
        })
        const apply = () => replaceFlagState(db, current, { name: target.name, tags: target.tags ?? [], states }, versionOf(current))
        const f = await recordChange(platform, ctx, { project_id: p._id, kind: 'flag', target: params.key }, apply, (f) => (f ? flagState(p, f) : undefined))
        if (!f) {
          // Changed between the read and the write: with If-Match that is the caller's conflict, else read again.
          if (cond || attempt + 1 >= ATTEMPTS) {
            const now = await getFlag(db, p._id, params.key)
            throw now ? changedMeanwhile('flag', flagView(now)) : notFound('Flag not found')
          }
          continue
        }
        await bumpVersion(db, p._id)
        await cache.changed(p._id)
        setEtag(ctx, versionOf(f))
        ctx.body = flagView(f)
        return
      }
    },
  )

  return router
}
