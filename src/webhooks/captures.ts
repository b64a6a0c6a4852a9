// Captured requests in MongoDB: one document per request, keyed by endpoint token + integer id,
// with the exact body bytes (inline or GridFS), the headers lower-cased and in arrival order,
// and the forward delivery state. Forward attempts are documents of their own collection.
import type { Binary, Db, Filter, ObjectId } from 'mongodb'
import type { IndexSpec } from '../platform/mongo.ts'
import { deleteBodyFiles } from './body-store.ts'

export type ForwardStatus = 'pending' | 'retrying' | 'delivered' | 'dead' | 'paused'

export interface ForwardState {
  status: ForwardStatus
  /** Bumped by a manual retry, so stale jobs of an earlier round do nothing. */
  round: number
  attempts: number
  last_status: number | null
  last_error: string | null
  next_attempt_at: Date | null
  delivered_at: Date | null
  /** While forwarding of the endpoint is paused: the attempt to make when it resumes. */
  paused_attempt?: number
}

export interface CaptureDoc {
  _id: string // `${token}.${id}`
  endpoint_id: string
  account_id: string
  id: number
  method: string
  path: string
  /** Part of the path after /hook/<token> (forwarded to forward_url + sub_path). */
  sub_path: string
  query: string
  headers: Record<string, string>
  raw_headers: string[]
  content_type: string | null
  ip_address: string
  size_bytes: number
  received_at: Date
  expires_at: Date
  body?: Binary
  body_file?: ObjectId
  forward?: ForwardState
  /** The first bytes of a text body, lower-cased, for the `q` search (search.ts); never presented. */
  search_text?: string
  /** What the local target of a `listen` CLI answered (the last report). */
  local_delivery?: LocalDelivery
}

export interface LocalDelivery {
  url: string
  status: number | null
  latency_ms: number
  /** The first bytes of the local answer, as text. */
  body_preview: string
  error: string | null
  at: Date
}

export interface AttemptDoc {
  _id: string // `${token}.${id}.${round}.${attempt}`
  /** The capture's _id, so a batch of captures drops its attempts in one write. */
  capture: string
  endpoint_id: string
  request_id: number
  round: number
  attempt: number
  url: string
  at: Date
  status: number | null
  latency_ms: number
  error: string | null
  ok: boolean
}

export const captureIndexes: IndexSpec[] = [
  {
    collection: 'webhook_captures',
    indexes: [
      { key: { endpoint_id: 1, id: -1 }, name: 'endpoint_id', unique: true },
      { key: { expires_at: 1 }, name: 'expires_at' },
    ],
  },
  {
    collection: 'webhook_forward_attempts',
    indexes: [
      { key: { endpoint_id: 1, request_id: 1, at: 1 }, name: 'endpoint_request' },
      { key: { capture: 1 }, name: 'capture' },
    ],
  },
]

export const captures = (db: Db) => db.collection<CaptureDoc>('webhook_captures')
export const attempts = (db: Db) => db.collection<AttemptDoc>('webhook_forward_attempts')

export const captureKey = (token: string, id: number) => `${token}.${id}`

export async function getCapture(db: Db, token: string, id: number): Promise<CaptureDoc | null> {
  return captures(db).findOne({ _id: captureKey(token, id) })
}

/** Newest first; `before` pages to older requests, `after` polls for newer ones. */
export async function listCaptures(
  db: Db,
  token: string,
  opts: { limit: number; before?: number; after?: number },
  search: Filter<CaptureDoc> = {},
): Promise<CaptureDoc[]> {
  const id: Record<string, number> = {}
  if (opts.before !== undefined) id.$lt = opts.before
  if (opts.after !== undefined) id.$gt = opts.after
  const filter = Object.keys(id).length ? { ...search, endpoint_id: token, id } : { ...search, endpoint_id: token }
  return captures(db).find(filter).sort({ id: -1 }).limit(opts.limit).toArray()
}

export async function listAttempts(db: Db, token: string, id: number): Promise<AttemptDoc[]> {
  return attempts(db).find({ endpoint_id: token, request_id: id }).sort({ at: 1, attempt: 1 }).toArray()
}

export async function countByEndpoint(db: Db, tokens: string[]): Promise<Map<string, number>> {
  if (!tokens.length) return new Map()
  const rows = await captures(db)
    .aggregate<{ _id: string; n: number }>([{ $match: { endpoint_id: { $in: tokens } } }, { $group: { _id: '$endpoint_id', n: { $sum: 1 } } }])
    .toArray()
  return new Map(rows.map((r) => [r._id, r.n]))
}

/** Delete the given captures with their GridFS bodies and forward attempts. */
export async function deleteCaptures(db: Db, docs: CaptureDoc[]): Promise<number> {
  if (!docs.length) return 0
  await deleteBodyFiles(db, docs.flatMap((d) => (d.body_file ? [d.body_file] : [])))
  await attempts(db).deleteMany({ capture: { $in: docs.map((d) => d._id) } })
  const r = await captures(db).deleteMany({ _id: { $in: docs.map((d) => d._id) } })
  return r.deletedCount
}

/** Delete every capture of an endpoint, in batches (the engine copies a collection per write). */
export async function deleteEndpointCaptures(db: Db, token: string, batch = 500): Promise<number> {
  let total = 0
  for (;;) {
    const docs = await captures(db).find({ endpoint_id: token }).limit(batch).toArray()
    if (!docs.length) return total
    total += await deleteCaptures(db, docs)
  }
}
