// Captured requests in MongoDB: one document per request, keyed by endpoint token + integer id,
// spread over the slots of a partitioned collection by (token, block of 128 ids),
// with the exact body bytes (inline or GridFS), the headers lower-cased and in arrival order,
// and the forward delivery state. Forward attempts are documents of their own partitioned
// collection, placed by the same (token, block) key as their capture.
import type { Binary, Db, Document, Filter, ObjectId } from 'mongodb'
import type { IndexSpec } from '../../platform/store/mongo.ts'
import { partitioned, type Partitioned } from '../../platform/store/partitioned.ts'
import { deleteBodyFiles } from './body-store.ts'
import { endpoints } from './endpoint-store.ts'
import { countDead } from './forward-stats.ts'

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
  /** Failed for good (the request can never be sent): a re-run reports it refused, not failed. */
  permanent?: boolean
}

/** Request ids per block: a block of one endpoint's captures lives in one slot (partitioned.ts). */
export const CAPTURE_BLOCK = 128
export const CAPTURES = 'webhook_captures'
export const ATTEMPTS = 'webhook_forward_attempts'

export const captureIndexes: IndexSpec[] = [
  {
    collection: CAPTURES,
    // 1,000 slots on the embedded engine: 100,000 captures of one endpoint are one block of 128
    // (at most) per slot, which every slot query scans whole there (docs/embedded-store.md).
    partitions: 1000,
    indexes: [
      { key: { endpoint_id: 1, id: -1 }, name: 'endpoint_id', unique: true },
      { key: { expires_at: 1 }, name: 'expires_at' },
    ],
    // The engine scans for every query anyway, and these two made each capture write ~3× dearer
    // at a few hundred captures per slot. The unique one is a safety net only: a capture's _id is
    // `<token>.<id>`, so _id alone refuses a second capture with the same id (capture-ingress.ts).
    notOnEngine: ['endpoint_id', 'expires_at'],
  },
  {
    collection: ATTEMPTS,
    // They grow with forwarded captures (one or more each), so they are spread like captures.
    partitions: 1000,
    indexes: [
      { key: { endpoint_id: 1, request_id: 1, at: 1 }, name: 'endpoint_request' },
      { key: { capture: 1 }, name: 'capture' },
    ],
    notOnEngine: ['endpoint_request', 'capture'],
  },
]

export const captures = (db: Db) => partitioned<CaptureDoc>(db, CAPTURES)
export const attempts = (db: Db) => partitioned<AttemptDoc>(db, ATTEMPTS)

export const captureKey = (token: string, id: number) => `${token}.${id}`
const blockOf = (id: number) => Math.floor(id / CAPTURE_BLOCK)

/** The physical collection that holds (or will hold) capture `id` of endpoint `token`. */
export const captureCollection = (db: Db, token: string, id: number) => captures(db).of(token, blockOf(id))

/** The physical collection that holds the forward attempts of capture `id` of endpoint `token`. */
export const attemptCollection = (db: Db, token: string, id: number) => attempts(db).of(token, blockOf(id))

/**
 * Oldest first: up to `limit` captures of endpoint `token` with ids above `after` (up to `top`,
 * the endpoint's newest id) that match `filter`, walking its blocks upward, one query per block.
 */
export async function capturesAfter(db: Db, token: string, opts: { after: number; top: number; limit: number }, filter: Filter<CaptureDoc> = {}): Promise<CaptureDoc[]> {
  const out: CaptureDoc[] = []
  for (let block = blockOf(opts.after + 1); block <= blockOf(opts.top) && out.length < opts.limit; block++) {
    const id = { $gte: Math.max(block * CAPTURE_BLOCK, opts.after + 1), $lte: Math.min((block + 1) * CAPTURE_BLOCK - 1, opts.top) }
    if (id.$gte > id.$lte) continue
    // endpoint_id and id before the filter: the embedded engine tests fields in order (capture-search.ts).
    out.push(...(await captures(db).of(token, block).find({ endpoint_id: token, id, ...filter }).sort({ id: 1 }).limit(opts.limit - out.length).toArray()))
  }
  return out
}

export async function getCapture(db: Db, token: string, id: number): Promise<CaptureDoc | null> {
  return captureCollection(db, token, id).findOne({ _id: captureKey(token, id) })
}

/**
 * Newest first; `before` pages to older requests, `after` polls for newer ones; `search` narrows
 * (search.ts). Walks the endpoint's blocks downward from its newest id (`top`, the endpoint's
 * seq), one query per block, until `limit` are found: right for an unfiltered page, which one or
 * two blocks hold; GET …/requests searches with capture-search.ts instead.
 */
export async function listCaptures(
  db: Db,
  token: string,
  opts: { limit: number; before?: number; after?: number; top: number; projection?: Document },
  search: Filter<CaptureDoc> = {},
): Promise<CaptureDoc[]> {
  const out: CaptureDoc[] = []
  const highest = Math.min(opts.top, opts.before !== undefined ? opts.before - 1 : opts.top)
  const lowest = opts.after !== undefined ? opts.after + 1 : 0
  for (let block = blockOf(highest); block >= 0 && block >= blockOf(lowest) && out.length < opts.limit; block--) {
    const id = { $gte: Math.max(block * CAPTURE_BLOCK, lowest), $lte: Math.min((block + 1) * CAPTURE_BLOCK - 1, highest) }
    if (id.$gte > id.$lte) continue
    const docs = await captures(db).of(token, block).find({ endpoint_id: token, id, ...search }, { projection: opts.projection }).sort({ id: -1 }).limit(opts.limit - out.length).toArray()
    out.push(...docs)
  }
  return out
}

export async function listAttempts(db: Db, token: string, id: number): Promise<AttemptDoc[]> {
  return attemptCollection(db, token, id).find({ endpoint_id: token, request_id: id }).sort({ at: 1, attempt: 1 }).toArray()
}

/** The forward attempts of some captures of endpoint `token`, by capture: one query per slot they are in. */
export async function attemptsOf(db: Db, token: string, ids: number[]): Promise<Map<number, AttemptDoc[]>> {
  const bySlot = new Map<string, { coll: ReturnType<typeof attemptCollection>; keys: string[] }>()
  for (const id of ids) {
    const coll = attemptCollection(db, token, id)
    const g = bySlot.get(coll.collectionName) ?? { coll, keys: [] }
    g.keys.push(captureKey(token, id))
    bySlot.set(coll.collectionName, g)
  }
  const out = new Map<number, AttemptDoc[]>(ids.map((id) => [id, []]))
  for (const { coll, keys } of bySlot.values()) for (const a of await coll.find({ capture: { $in: keys } }).toArray()) out.get(a.request_id)?.push(a)
  for (const list of out.values()) list.sort((a, b) => a.round - b.round || a.attempt - b.attempt)
  return out
}

/** Stored captures per endpoint: one aggregate per slot that any of the endpoints' blocks uses. */
export async function countByEndpoint(db: Db, eps: Array<{ _id: string; seq: number }>): Promise<Map<string, number>> {
  const out = new Map<string, number>(eps.map((e) => [e._id, 0]))
  if (!eps.length) return out
  const parts = captures(db)
  const tokens = eps.map((e) => e._id)
  for (const slot of slotsOf(parts, eps)) {
    const rows = await parts
      .at(slot)
      .aggregate<{ _id: string; n: number }>([{ $match: { endpoint_id: { $in: tokens } } }, { $group: { _id: '$endpoint_id', n: { $sum: 1 } } }])
      .toArray()
    for (const r of rows) out.set(r._id, (out.get(r._id) ?? 0) + r.n)
  }
  return out
}

/** Delete the given captures with their GridFS bodies and forward attempts. */
export async function deleteCaptures(db: Db, docs: CaptureDoc[]): Promise<number> {
  if (!docs.length) return 0
  await deleteBodyFiles(db, docs.flatMap((d) => (d.body_file ? [d.body_file] : [])))
  const attemptsBySlot = new Map<number, string[]>()
  const tries = attempts(db)
  for (const d of docs) {
    const slot = tries.slotOf(d.endpoint_id, blockOf(d.id))
    attemptsBySlot.set(slot, [...(attemptsBySlot.get(slot) ?? []), d._id])
  }
  for (const [slot, ids] of attemptsBySlot) await tries.at(slot).deleteMany({ capture: { $in: ids } })
  // Grouped by slot: one delete per physical collection.
  const bySlot = new Map<number, string[]>()
  const parts = captures(db)
  for (const d of docs) {
    const slot = parts.slotOf(d.endpoint_id, blockOf(d.id))
    bySlot.set(slot, [...(bySlot.get(slot) ?? []), d._id])
  }
  let n = 0
  for (const [slot, ids] of bySlot) n += (await parts.at(slot).deleteMany({ _id: { $in: ids } })).deletedCount
  // Dead-lettered ones leave the dead letter (forward-stats.ts).
  const dead = new Map<string, number>()
  for (const d of docs) if (d.forward?.status === 'dead') dead.set(d.endpoint_id, (dead.get(d.endpoint_id) ?? 0) + 1)
  for (const [token, k] of dead) await countDead(db, token, -k)
  return n
}

/**
 * The slots any stored capture can be in: those of every endpoint's ids so far (a store with no
 * endpoint has none; a large one has them all). A scan of every capture reads only these.
 */
export async function slotsInUse(db: Db): Promise<number[]> {
  const eps = await endpoints(db).find({ seq: { $gt: 0 } }, { projection: { _id: 1, seq: 1 } }).toArray()
  return [...slotsOf(captures(db), eps)].sort((a, b) => a - b)
}

/** The slots the captures of one endpoint can be in (its ids 1…seq). */
export const endpointSlots = (db: Db, ep: { _id: string; seq: number }): number[] => [...slotsOf(captures(db), [ep])].sort((a, b) => a - b)

/** The slots that the blocks of these endpoints' ids (1…seq) map to. */
function slotsOf(parts: Partitioned<CaptureDoc>, eps: Array<{ _id: string; seq: number }>): Set<number> {
  const slots = new Set<number>()
  for (const e of eps) {
    const blocks = blockOf(e.seq) + 1
    if (blocks >= parts.slots) return new Set(parts.all().map((_, i) => i))
    for (let b = 0; b < blocks; b++) slots.add(parts.slotOf(e._id, b))
  }
  return slots
}

/** Delete every capture of an endpoint, in batches (the engine copies a collection per write). */
export async function deleteEndpointCaptures(db: Db, ep: { _id: string; seq: number }, batch = 500): Promise<number> {
  let total = 0
  const token = ep._id
  const parts = captures(db)
  for (const slot of slotsOf(parts, [ep])) {
    const coll = parts.at(slot)
    for (;;) {
      const docs = await coll.find({ endpoint_id: token }).limit(batch).toArray()
      if (!docs.length) break
      total += await deleteCaptures(db, docs)
      if (docs.length < batch) break
    }
  }
  return total
}
