// Search digests: for each sealed block of 128 captures of an endpoint, a Bloom filter of the
// terms its captures can be found by (method, sub-path prefixes, header names and name:value
// pairs, trigrams of the searchable body text) and its time span. A filtered search skips every
// block whose digest says it holds no match (capture-search.ts), so a filter that matches 1 in
// 1,000 reads the few blocks that may match instead of every capture of the endpoint: the embedded
// engine has no usable indexes (each query scans its whole collection) and a real MongoDB cannot
// index an unanchored text search either. A Bloom filter can say "maybe" wrongly (~1 %: that block
// is read for nothing) but never "no" wrongly, so results stay exact.
//
// Digests live in the API process's memory (bounded, least recently used endpoints dropped first)
// and are built in the background, newest block first, by the first filtered search of an endpoint
// and brought up to date by later ones; until a block has one it is searched as before. Only
// sealed blocks get one: a capture's id is taken before its body is read, so a block can still
// receive a capture until every id in it was taken longer ago than a request can last. A block is
// sealed once a capture of a higher block was received more than SEALED_AFTER_MS ago (its id, and
// so every lower id, was taken before that). Captures only leave a sealed block (retention,
// deletion), which keeps the digest a superset. Forward status changes, so it is never pruned on.
import murmurhash from 'murmurhash'
import type { Db } from 'mongodb'
import { clock } from '../../platform/clock.ts'
import { logger } from '../../platform/logger.ts'
import { CAPTURE_BLOCK, captureCollection, type CaptureDoc } from '../store/capture-store.ts'
import type { SearchQuery } from './search.ts'

/** Node's HTTP server ends a request after 300 s (its default requestTimeout), plus a minute to store it. */
export const SEALED_AFTER_MS = 6 * 60_000
/** A build reads the unsealed (newest) blocks again; at most this often per endpoint. */
const REBUILD_MS = 30_000
/** Sub-path prefixes are terms up to this length; a longer path_prefix is tested by its start. */
const PREFIX_CHARS = 64
/**
 * Body text of a block beyond this many characters (4 KiB a capture on average) is not digested:
 * the block's digest then knows no text and never rules a block out for `q` (it still does for
 * the other filters). Bounds the CPU and memory a digest costs.
 */
const TEXT_BUDGET = 512 * 1024
/** Captures digested between two yields to the event loop (a build never holds it for long). */
const YIELD_EVERY = 8
const HASHES = 4
const BITS_PER_TERM = 10
/** Digest memory per API process. */
export const DIGEST_CACHE_BYTES = 64 * 1024 * 1024

export interface Digest {
  bits: Uint8Array
  /** Whether body text is in it (false: too much text in the block; `q` cannot rule it out). */
  text: boolean
  /** received_at span of the block's captures (ms); an empty block has minAt > maxAt. */
  minAt: number
  maxAt: number
}

type SearchDoc = Pick<CaptureDoc, 'id' | 'method' | 'sub_path' | 'headers' | 'search_text' | 'received_at'>

const blockOf = (id: number) => Math.floor(id / CAPTURE_BLOCK)

function captureTerms(d: SearchDoc, text: boolean, add: (t: string) => void): void {
  add(`m ${d.method}`)
  const p = d.sub_path.slice(0, PREFIX_CHARS)
  for (let i = 1; i <= p.length; i++) add(`p ${p.slice(0, i)}`)
  for (const [name, value] of Object.entries(d.headers)) {
    add(`h ${name}`)
    add(`v ${name}:${value}`)
  }
  const t = text ? (d.search_text ?? '') : ''
  for (let i = 0; i + 3 <= t.length; i++) add(`t ${t.slice(i, i + 3)}`)
}

/**
 * What a block must contain for the query to match in it: every group needs one of its terms.
 * Empty when the query has nothing a digest knows (forward status only, or a 1–2 character q).
 */
export function queryTerms(q: SearchQuery): string[][] {
  const groups: string[][] = []
  if (q.method) groups.push(q.method.map((m) => `m ${m}`))
  if (q.path_prefix) groups.push([`p ${q.path_prefix.slice(0, PREFIX_CHARS)}`])
  for (const h of q.header ?? []) groups.push([h.value === undefined ? `h ${h.name}` : `v ${h.name}:${h.value}`])
  const t = q.q?.toLowerCase() ?? ''
  for (let i = 0; i + 3 <= t.length; i++) groups.push([`t ${t.slice(i, i + 3)}`])
  return groups
}

function positions(term: string, bits: number): number[] {
  const h1 = murmurhash.v3(term, 0)
  const h2 = murmurhash.v3(term, 0x9747b28c) | 1
  return Array.from({ length: HASHES }, (_, i) => ((h1 + Math.imul(i, h2)) >>> 0) & (bits - 1))
}

export async function buildDigest(docs: SearchDoc[]): Promise<Digest> {
  const terms = new Set<string>()
  const text = docs.reduce((n, d) => n + (d.search_text?.length ?? 0), 0) <= TEXT_BUDGET
  let minAt = Infinity
  let maxAt = -Infinity
  for (const [i, d] of docs.entries()) {
    if (i > 0 && i % YIELD_EVERY === 0) await new Promise((r) => setImmediate(r))
    captureTerms(d, text, (t) => terms.add(t))
    minAt = Math.min(minAt, d.received_at.getTime())
    maxAt = Math.max(maxAt, d.received_at.getTime())
  }
  let bits = 1024
  while (bits < terms.size * BITS_PER_TERM) bits *= 2
  const out = new Uint8Array(bits / 8)
  for (const t of terms) for (const p of positions(t, bits)) out[p >>> 3]! |= 1 << (p & 7)
  return { bits: out, text, minAt, maxAt }
}

/** Whether a block with digest `dg` may hold a capture matching `q` (false: it certainly holds none). */
export function digestMayHold(dg: Digest, q: SearchQuery): boolean {
  return mayHold(dg, queryTerms(q), q.since, q.until)
}

function mayHold(dg: Digest, groups: string[][], since?: Date, until?: Date): boolean {
  if (dg.minAt > dg.maxAt) return false
  if (since && dg.maxAt < since.getTime()) return false
  if (until && dg.minAt >= until.getTime()) return false
  const bits = dg.bits.length * 8
  const has = (t: string) => (!dg.text && t.startsWith('t ')) || positions(t, bits).every((p) => dg.bits[p >>> 3]! & (1 << (p & 7)))
  return groups.every((g) => g.some(has))
}

interface EndpointDigests {
  blocks: Map<number, Digest | null>
  bytes: number
  /** Highest request id the last build started from. */
  builtTo: number
  /** Whether the last build left blocks without a digest (not yet sealed). */
  unsealed: boolean
  lastBuildAt: number
  building: Promise<void> | null
}

/** The digests of one database's endpoints in this process (least recently used dropped first). */
export class DigestCache {
  private readonly endpoints = new Map<string, EndpointDigests>()
  private bytes = 0

  constructor(
    private readonly db: Db,
    private readonly budget = DIGEST_CACHE_BYTES,
  ) {}

  /**
   * A test of whether block b of `token` may hold a match of `q`: true for blocks without a
   * digest. Starts (or continues) building the endpoint's digests up to `top` in the background.
   */
  pruner(token: string, top: number, q: SearchQuery): (block: number) => boolean {
    const groups = queryTerms(q)
    const ep = this.touch(token)
    if (!ep.building && (ep.builtTo < top || ep.unsealed) && clock.nowMs() - ep.lastBuildAt >= REBUILD_MS) {
      ep.lastBuildAt = clock.nowMs()
      ep.building = this.build(token, ep, top)
        .catch((err: unknown) => logger.warn({ err: String(err), token }, 'search digests not built'))
        .finally(() => (ep.building = null))
    }
    if (!groups.length && !q.since && !q.until) return () => true
    return (b) => {
      const dg = ep.blocks.get(b)
      return dg ? mayHold(dg, groups, q.since, q.until) : true
    }
  }

  /** Bytes of digests held (metrics, benchmarks). */
  get size(): number {
    return this.bytes
  }

  /** Wait for a running build (tests, benchmarks). */
  async settled(token: string): Promise<void> {
    await this.endpoints.get(token)?.building
  }

  private touch(token: string): EndpointDigests {
    let ep = this.endpoints.get(token)
    if (ep) this.endpoints.delete(token)
    else ep = { blocks: new Map(), bytes: 0, builtTo: 0, unsealed: false, lastBuildAt: -Infinity, building: null }
    this.endpoints.set(token, ep) // most recently used last
    return ep
  }

  /** Newest block first, one query per block; blocks that already have a digest are skipped. */
  private async build(token: string, ep: EndpointDigests, top: number): Promise<void> {
    let oldestAbove = Infinity // the oldest received_at of the blocks above the current one
    let unsealed = false
    for (let b = blockOf(top); b >= 0; b--) {
      if (this.endpoints.get(token) !== ep) return // dropped meanwhile
      const known = ep.blocks.get(b)
      if (known !== undefined) {
        if (known) oldestAbove = Math.min(oldestAbove, known.minAt)
        continue
      }
      const docs = await captureCollection(this.db, token, b * CAPTURE_BLOCK)
        .find(
          { endpoint_id: token, id: { $gte: b * CAPTURE_BLOCK, $lte: (b + 1) * CAPTURE_BLOCK - 1 } },
          { projection: { id: 1, method: 1, sub_path: 1, headers: 1, search_text: 1, received_at: 1 } },
        )
        .toArray()
      if (oldestAbove <= clock.nowMs() - SEALED_AFTER_MS) {
        const dg = await buildDigest(docs)
        const size = dg.bits.length + 64
        // Over the budget even with every other endpoint dropped: the rest of this one stays undigested.
        const fits = this.makeRoom(size, token)
        ep.blocks.set(b, fits ? dg : null)
        ep.bytes += fits ? size : 0
        this.bytes += fits ? size : 0
      } else unsealed = true
      for (const d of docs) oldestAbove = Math.min(oldestAbove, d.received_at.getTime())
    }
    ep.builtTo = top
    ep.unsealed = unsealed
  }

  /** Drop least recently used endpoints (never `keep`) until `size` more bytes fit; false if they cannot. */
  private makeRoom(size: number, keep: string): boolean {
    for (const [token, ep] of this.endpoints) {
      if (this.bytes + size <= this.budget) break
      if (token === keep) continue
      this.bytes -= ep.bytes
      this.endpoints.delete(token)
    }
    return this.bytes + size <= this.budget
  }
}

const caches = new WeakMap<Db, DigestCache>()

/** The process's digest cache of database `db`. */
export function digestCache(db: Db): DigestCache {
  let c = caches.get(db)
  if (!c) caches.set(db, (c = new DigestCache(db)))
  return c
}
