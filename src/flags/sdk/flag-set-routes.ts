// GET /api/v1/flag-set: the whole rule set of the SDK key's project environment (flags with their
// variant allocations, the segments they name), for SDKs that evaluate in process
// (packages/openfeature-provider). Server SDK keys only: the rules can hold e-mail addresses and
// other targeting data that a client-side key, shipped in web pages, must not reveal. The answer
// is the versioned format of docs/schemas/flag-set.v1.json; its ETag is the flag set's tag (the
// id of the change stream's events), so If-None-Match → 304 while nothing moved.
import Router from '@koa/router'
import type { Context } from 'koa'
import { forbidden, HttpError } from '../../platform/http/errors.ts'
import { FLAG_SET_FORMAT_VERSION, type FlagSetV1 } from '../engine/flag-set.ts'
import type { FlagCache, ProjectSnapshot } from './flag-cache.ts'
import { answerTagged } from './tagged-answer.ts'
import { SDK_UNAUTHORIZED, sdkKeyOf, type Admit } from './sdk-auth.ts'

export const FLAG_SET_PATH = '/api/v1/flag-set'

export const CLIENT_KEY_REFUSED =
  'Forbidden: the flag set needs a server SDK key (fbsrv_…); client-side SDK keys (fbsdk_…) may only evaluate. Make one with POST /api/v1/projects/{id}/environments/{name}/server-key/rotate'

/** Each snapshot's answer, serialised once: every provider of a flag set fetches the same bytes. */
const bodies = new WeakMap<ProjectSnapshot, string>()

function bodyOf(snap: ProjectSnapshot): string {
  let s = bodies.get(snap)
  if (s === undefined) {
    const set: FlagSetV1 = {
      format_version: FLAG_SET_FORMAT_VERSION,
      project: snap.projectId,
      environment: snap.environment,
      etag: snap.tag,
      flags: snap.all.map((f) => f.definition),
      segments: snap.segments,
    }
    bodies.set(snap, (s = JSON.stringify(set)))
  }
  return s
}

export function flagSetRouter(cache: FlagCache, admit: Admit): Router {
  const router = new Router()

  router.get(FLAG_SET_PATH, async (ctx: Context) => {
    const challenge = { 'WWW-Authenticate': 'Bearer' }
    const entry = await admit(sdkKeyOf(ctx), challenge)
    if (!entry.server) throw forbidden(CLIENT_KEY_REFUSED)
    let snap = await cache.snapshot(entry.projectId)
    // After a change-stream event the provider names the tag it was told of: a replica that has
    // not heard of that change yet reads the flags again (as OFREP's flagConfigEtag).
    const told = ctx.query.flagConfigEtag
    if (snap && typeof told === 'string' && told !== '' && told !== snap.tag) snap = await cache.reload(entry.projectId)
    // The key's environment went away between the key check and the read.
    if (!snap) throw new HttpError(401, SDK_UNAUTHORIZED, challenge)
    answerTagged(ctx, `"${snap.tag}"`, 'private, no-cache', () => bodyOf(snap))
  })

  return router
}
