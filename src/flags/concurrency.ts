// Optimistic concurrency of flags, segments and projects' settings: each carries a `version` (1 at
// creation, +1 on every change; a project's counts only its name and allowed origins), answered as the body's `version` and as `ETag: "<version>"`. A PUT or DELETE
// with `If-Match` is applied only if the resource is still at one of the listed versions (`*`:
// any, as long as it exists); else 412 with the current resource, so a client editing a stale
// copy is never silently applied over someone else's change. Without If-Match, writes are applied
// as before. The check is made again in the store's write itself (a filter on the version), so a
// change landing between the read and the write is caught too.
import type { Context } from 'koa'
import { badRequest, HttpError } from '../platform/http/errors.ts'
import { describedAs } from '../platform/ops/openapi.ts'

/** What carries a version. */
export type Versioned = 'flag' | 'segment' | 'project'

export type IfMatch = { any: true } | { versions: number[] }

const MAX_IF_MATCH = 1_000
const TAG = /^"(\d{1,15})"$/

/** The request's If-Match (undefined: none). A value that is not `*` or a list of `"<version>"` tags is a 400. */
export function ifMatchOf(ctx: Context): IfMatch | undefined {
  const raw = ctx.get('if-match').trim()
  if (raw === '') return undefined
  if (raw === '*') return { any: true }
  const bad = () => badRequest('If-Match must be "*" or the ETag of the version you edited, such as "3"')
  if (raw.length > MAX_IF_MATCH) throw bad()
  const versions: number[] = []
  for (const part of raw.split(',')) {
    const m = TAG.exec(part.trim())
    if (!m) throw bad()
    versions.push(Number(m[1]))
  }
  return { versions }
}

/** Whether a resource at `version` satisfies the If-Match. */
export function matches(cond: IfMatch, version: number): boolean {
  return 'any' in cond || cond.versions.includes(version)
}

/** The version the write must still find (undefined: no condition, or `*`). */
export function guardVersion(cond: IfMatch | undefined, version: number): number | undefined {
  return cond && !('any' in cond) ? version : undefined
}

export const etag = (version: number) => `"${version}"`

export function setEtag(ctx: Context, version: number): void {
  ctx.set('ETag', etag(version))
}

/** 412 with the resource as it is now (its view, as GET answers it) and its ETag. */
export function changedMeanwhile(what: Versioned, current: { version: number }): HttpError {
  return new HttpError(
    412,
    `The ${what} was changed by someone else (version ${current.version} is current)`,
    { ETag: etag(current.version) },
    { current },
  )
}

const errorJson = (description: string) => ({ description, content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } })

/** What /openapi.json says of a conditional write (PUT, DELETE of a flag or segment; PATCH, PUT of a project). */
export const conditionalWrite = (what: Versioned) =>
  describedAs({
    parameters: [
      {
        name: 'If-Match',
        in: 'header',
        required: false,
        description: `Apply only if the ${what} is still at this version: its ETag as GET answered it (e.g. "3"), or * (it exists). Without it the change is applied whatever the version.`,
        schema: { type: 'string' },
      },
    ],
    responses: {
      '412': errorJson(`The ${what} is at another version: \`current\` holds it as GET answers it, and ETag its version.`),
    },
  })

/** What /openapi.json says of an answer that carries the version's ETag. */
export const versionedRead = describedAs({
  responses: { '200': { description: 'Success. `ETag: "<version>"`, the body\'s `version`.', headers: { ETag: { schema: { type: 'string' } } } } },
})
