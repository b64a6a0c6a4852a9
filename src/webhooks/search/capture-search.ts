// Filtered listing of an endpoint's captures (GET …/requests and …/requests.har with filters),
// newest first, across the slots of the partitioned capture collection. Walking the endpoint's
// blocks one query each (listCaptures) suits an unfiltered page, which one or two blocks hold, but
// a selective filter would cost a query per block of 128: ~800 at 100,000 captures, each a scan
// of its whole slot on the embedded engine. Here:
//  1. blocks whose search digest rules a match out are skipped (search-digest.ts);
//  2. the remaining blocks are searched in widening windows, newest first; a window asks each
//     slot its blocks map to once, in parallel, for its matches in those blocks, and merges them
//     newest first. A window covers every candidate id in its range, so its merged top is exact
//     and the next window starts below it: `before`/`after` cursors stay exact. On a one-slot
//     layout (MongoDB) the first window is all of them: one indexed query (indexes: search.ts).
import type { Db, Document, Filter } from 'mongodb'
import { CAPTURE_BLOCK, captures, listCaptures, type CaptureDoc } from '../store/capture-store.ts'
import { searchFilter, type SearchQuery } from './search.ts'
import { digestCache } from './search-digest.ts'

/** Slot queries of one search in flight at once (the connection pool is shared with captures). */
const PARALLEL = 16
/** Candidate blocks in the first window (a broad filter's page is there); each next one up to 4× more. */
const FIRST_WINDOW = 2
const GROWTH = 4

const blockOf = (id: number) => Math.floor(id / CAPTURE_BLOCK)

/** Slot queries made by filtered searches in this process (benchmarks). */
export const searchStats = { searches: 0, queries: 0 }

/** Run `tasks` with at most `n` in flight; results in task order. */
async function bounded<T>(tasks: Array<() => Promise<T>>, n: number): Promise<T[]> {
  const out: T[] = new Array(tasks.length)
  let next = 0
  const runner = async () => {
    while (next < tasks.length) {
      const i = next++
      out[i] = await tasks[i]!()
    }
  }
  await Promise.all(Array.from({ length: Math.min(n, tasks.length) }, runner))
  return out
}

export interface ListOptions {
  limit: number
  before?: number
  after?: number
  /** The endpoint's newest request id (its seq). */
  top: number
  /** Fields to leave out or keep (e.g. `{ body: 0 }` when bodies are read one at a time). */
  projection?: Document
}

/** The page of captures of endpoint `token` that GET …/requests answers for `query`. */
export async function findCaptures(db: Db, token: string, opts: ListOptions, query: SearchQuery): Promise<CaptureDoc[]> {
  const search = searchFilter(query)
  if (!Object.keys(search).length) return listCaptures(db, token, opts)
  const highest = Math.min(opts.top, opts.before !== undefined ? opts.before - 1 : opts.top)
  const lowest = opts.after !== undefined ? opts.after + 1 : 0
  const mayHold = digestCache(db).pruner(token, opts.top, query)
  return searchCaptures(db, token, { limit: opts.limit, lowest, highest, projection: opts.projection }, search, mayHold)
}

/**
 * Up to `limit` captures of endpoint `token` with `lowest ≤ id ≤ highest` that match `search`,
 * newest first: exactly the `limit` largest matching ids, provided `mayHold(block)` is true for
 * every block that holds a match.
 */
export async function searchCaptures(
  db: Db,
  token: string,
  opts: { limit: number; lowest: number; highest: number; projection?: Document },
  search: Filter<CaptureDoc>,
  mayHold: (block: number) => boolean = () => true,
): Promise<CaptureDoc[]> {
  const parts = captures(db)
  const out: CaptureDoc[] = []
  searchStats.searches++
  if (opts.highest < opts.lowest) return out
  // The candidate blocks, newest first (a Bloom test each: microseconds).
  const blocks: number[] = []
  for (let b = blockOf(opts.highest); b >= blockOf(opts.lowest); b--) if (mayHold(b)) blocks.push(b)
  // One slot (MongoDB): one query with the server's index does it all. When the digests ruled out
  // most blocks, nearly every candidate holds a match: read a page's worth at once, not in rounds.
  const total = blockOf(opts.highest) - blockOf(opts.lowest) + 1
  let width = parts.slots === 1 ? Infinity : blocks.length * 2 < total ? Math.ceil(1.2 * opts.limit) : FIRST_WINDOW
  for (let i = 0; i < blocks.length && out.length < opts.limit; ) {
    const need = opts.limit - out.length
    // Few left: one window for all of them rather than one more round trip.
    const window = blocks.slice(i, blocks.length - i <= 1.5 * width ? blocks.length : i + width)
    i += window.length
    const bySlot = new Map<number, Array<{ $gte: number; $lte: number }>>()
    for (const b of window) {
      const range = { $gte: Math.max(b * CAPTURE_BLOCK, opts.lowest), $lte: Math.min((b + 1) * CAPTURE_BLOCK - 1, opts.highest) }
      const slot = parts.slotOf(token, b)
      const ranges = bySlot.get(slot) ?? []
      // Adjacent blocks in one slot (always, on one slot) make one range.
      if (ranges.length && ranges.at(-1)!.$gte === range.$lte + 1) ranges.at(-1)!.$gte = range.$gte
      else ranges.push(range)
      bySlot.set(slot, ranges)
    }
    // endpoint_id and the id ranges first: the embedded engine tests a filter's fields in order
    // and stops at the first that fails, so other endpoints' and other blocks' documents cost a
    // string and a number comparison, not a regular expression.
    const filterOf = (ranges: Array<{ $gte: number; $lte: number }>) =>
      ({ endpoint_id: token, ...(ranges.length === 1 ? { id: ranges[0] } : { $or: ranges.map((id) => ({ id })) }), ...search }) as Filter<CaptureDoc>
    // Each slot may answer up to `need`, of which only `need` in all are kept. That over-reads
    // little: a window is entered only when the previous, a quarter its size, held fewer than
    // `need` matches.
    searchStats.queries += bySlot.size
    const found = await bounded(
      [...bySlot].map(([slot, ranges]) => () => parts.at(slot).find(filterOf(ranges), { projection: opts.projection }).sort({ id: -1 }).limit(need).toArray()),
      PARALLEL,
    )
    out.push(...found.flat().sort((x, y) => y.id - x.id).slice(0, need))
    // The next window: GROWTH times wider, or narrower when the matches per block so far say
    // fewer blocks fill the page (with half again for luck).
    const perBlock = out.length / i
    width = Math.max(1, Math.min(width * GROWTH, perBlock > 0 ? Math.ceil((1.5 * (opts.limit - out.length)) / perBlock) : Infinity))
  }
  return out
}
