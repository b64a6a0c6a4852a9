// Search over an endpoint's captures (GET …/requests filters): method, sub-path prefix, header
// name or name:value, a text query over the first SEARCH_TEXT_BYTES of text bodies, a time range
// and forward status. Every filter is ANDed with the endpoint and served by an index that starts
// with endpoint_id (searchIndexes), so a page stays fast however many captures an endpoint has.
import { isUtf8 } from 'node:buffer'
import type { Filter } from 'mongodb'
import { z } from 'zod'
import type { IndexSpec } from '../../platform/store/mongo.ts'
import type { CaptureDoc } from '../store/capture-store.ts'

/** Text bodies are searchable over their first 16 KiB (kept lower-cased beside the capture). */
export const SEARCH_TEXT_BYTES = 16 * 1024
const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const
const FORWARD_STATUSES = ['pending', 'retrying', 'delivered', 'dead', 'paused'] as const
// RFC 9110 token characters minus '.' and '$', which MongoDB field paths cannot hold.
const HEADER_NAME = /^[A-Za-z0-9!#%&'*+^_`|~-]{1,100}$/
const TIME = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?)?(Z|[+-]\d{2}:\d{2})?$/

/** The searchable text of a body: its first bytes lower-cased, when the body is text at all. */
export function searchText(body: Buffer): string | undefined {
  if (!body.length || !isUtf8(body)) return undefined
  return body.subarray(0, SEARCH_TEXT_BYTES).toString('utf8').toLowerCase()
}

export function isoTime(field: string) {
  return z
    .string()
    .max(40)
    .transform((s, ctx) => {
      // A time without a zone is UTC, like every time this API hands out.
      const ms = TIME.test(s) ? Date.parse(/Z|[+-]\d{2}:\d{2}$/.test(s) || !s.includes('T') ? s : `${s}Z`) : NaN
      if (Number.isNaN(ms)) {
        ctx.addIssue({ code: 'custom', message: `${field} must be an ISO 8601 time, e.g. 2026-11-21T09:15:02 (UTC unless a zone is given)` })
        return z.NEVER
      }
      return new Date(ms)
    })
    .optional()
}

const listOf = (v: string | string[]) => (Array.isArray(v) ? v : [v])

export const searchFields = {
  method: z
    .union([z.string(), z.array(z.string())])
    .transform((v, ctx) => {
      const ms = listOf(v).flatMap((s) => s.split(',')).map((s) => s.trim().toUpperCase()).filter(Boolean)
      const bad = ms.find((m) => !(METHODS as readonly string[]).includes(m))
      if (bad !== undefined || !ms.length) {
        ctx.addIssue({ code: 'custom', message: `method must be one of ${METHODS.join(', ')} (comma-separated for several)` })
        return z.NEVER
      }
      return ms
    })
    .optional(),
  path_prefix: z
    .string()
    .max(1_024)
    .regex(/^\//, { error: 'path_prefix must start with / (the part of the path after /hook/<token>)' })
    .optional(),
  header: z
    .union([z.string(), z.array(z.string()).max(5, { error: 'header may be given at most 5 times' })])
    .transform((v, ctx) => {
      const out: Array<{ name: string; value?: string }> = []
      for (const h of listOf(v)) {
        const i = h.indexOf(':')
        const name = (i < 0 ? h : h.slice(0, i)).trim().toLowerCase()
        if (!HEADER_NAME.test(name) || h.length > 1_100) {
          ctx.addIssue({ code: 'custom', message: 'header must be a header name or name:value (name: letters, digits and !#%&\'*+^_`|~-)' })
          return z.NEVER
        }
        out.push(i < 0 ? { name } : { name, value: h.slice(i + 1).trim() })
      }
      return out
    })
    .optional(),
  q: z.string().min(1, { error: 'q must not be empty' }).max(200, { error: 'q must be at most 200 characters' }).optional(),
  since: isoTime('since'),
  until: isoTime('until'),
  forward_status: z.enum(FORWARD_STATUSES, { error: `forward_status must be one of ${FORWARD_STATUSES.join(', ')}` }).optional(),
}

export type SearchQuery = {
  method?: string[]
  path_prefix?: string
  header?: Array<{ name: string; value?: string }>
  q?: string
  since?: Date
  until?: Date
  forward_status?: (typeof FORWARD_STATUSES)[number]
}

// Control characters as \xHH escapes: a BSON regular expression cannot hold a NUL byte, and the
// others read more safely escaped; every engine reads the escape as the character itself.
const escapeRegex = (s: string) =>
  s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/[\x00-\x1f\x7f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`)

/**
 * The MongoDB filter of the given search, to AND with the endpoint (and the id cursor). Cheapest
 * tests first and the regular expressions last: the embedded engine evaluates a filter's fields in
 * this order and stops at the first that fails (MongoDB's planner does not care).
 */
export function searchFilter(q: SearchQuery): Filter<CaptureDoc> {
  const f: Record<string, unknown> = {}
  if (q.method) f.method = q.method.length === 1 ? q.method[0] : { $in: q.method }
  if (q.forward_status) f['forward.status'] = q.forward_status
  if (q.since || q.until) f.received_at = { ...(q.since ? { $gte: q.since } : {}), ...(q.until ? { $lt: q.until } : {}) }
  for (const h of q.header ?? []) f[`headers.${h.name}`] = h.value === undefined ? { $exists: true } : h.value
  // Regular expressions as BSON values rather than {$regex: string}: the embedded engine compiles
  // the latter again for every document it tests (twice the cost); MongoDB treats both alike.
  // An anchored, case-sensitive prefix: MongoDB answers it from the index as a range.
  if (q.path_prefix) f.sub_path = new RegExp(`^${escapeRegex(q.path_prefix)}`)
  if (q.q) f.search_text = new RegExp(escapeRegex(q.q.toLowerCase()))
  return f as Filter<CaptureDoc>
}

export const searchIndexes: IndexSpec = {
  collection: 'webhook_captures',
  indexes: [
    { key: { endpoint_id: 1, method: 1, id: -1 }, name: 'endpoint_method' },
    { key: { endpoint_id: 1, sub_path: 1, id: -1 }, name: 'endpoint_sub_path' },
    { key: { endpoint_id: 1, 'forward.status': 1, id: -1 }, name: 'endpoint_forward_status' },
    { key: { endpoint_id: 1, received_at: -1 }, name: 'endpoint_received_at' },
    // Header names are whatever senders send: a compound wildcard index (MongoDB 7.0+, as compose
    // runs) serves `headers.<any name>` within the endpoint.
    { key: { endpoint_id: 1, 'headers.$**': 1 }, name: 'endpoint_headers' },
  ],
  // For MongoDB only: the engine scans whatever indexes exist, and each of these would make every
  // capture write dearer there (capture-store.ts). On the engine, search digests prune instead.
  notOnEngine: ['endpoint_method', 'endpoint_sub_path', 'endpoint_forward_status', 'endpoint_received_at', 'endpoint_headers'],
}
