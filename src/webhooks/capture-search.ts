// Filtered listing of an endpoint's captures, newest first, across the slots of the partitioned
// capture collection. Walking the endpoint's blocks one query at a time (listCaptures) is right
// for an unfiltered page (one or two blocks hold it) but costs one query per block of 128 for a
// selective filter: ~800 queries at 100,000 captures. Here the search goes in widening id windows;
// each window asks every slot its blocks map to once, in parallel, with the id range of the whole
// window (a slot holds several blocks of the endpoint; the range picks exactly those in the
// window), and merges the answers newest first. Since a window covers every id in its range, its
// merged top is exact and the next window starts below it: `before`/`after` cursors stay exact.
// A window that spans as many blocks as there are slots takes everything left at once (≤ one
// query per slot), and on a one-slot layout (MongoDB) the first window already does: one indexed
// query, the server's indexes (search.ts) doing the rest.
import type { Filter } from 'mongodb'
import type { Partitioned } from '../platform/partitioned.ts'
import type { CaptureDoc } from './captures.ts'

/** Slot queries of one search in flight at once (the connection pool is shared with captures). */
const PARALLEL = 16
/** The first window: as many blocks as an unfiltered page needs; each next one at least 4× wider. */
const FIRST_WINDOW_BLOCKS = 1
const GROWTH = 4

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

/**
 * Up to `limit` captures of endpoint `token` with `lowest ≤ id ≤ highest` that match `search`,
 * newest first: exactly the `limit` largest matching ids. `parts` is the capture collection, whose
 * slot of id is `parts.slotOf(token, ⌊id / block⌋)` (captures.ts).
 */
export async function searchCaptures(
  parts: Partitioned<CaptureDoc>,
  block: number,
  token: string,
  opts: { limit: number; lowest: number; highest: number },
  search: Filter<CaptureDoc>,
): Promise<CaptureDoc[]> {
  const blockOf = (id: number) => Math.floor(id / block)
  const out: CaptureDoc[] = []
  let hi = opts.highest
  let width = FIRST_WINDOW_BLOCKS
  while (hi >= opts.lowest && out.length < opts.limit) {
    const need = opts.limit - out.length
    const top = blockOf(hi)
    let bottom = Math.max(blockOf(opts.lowest), top - width + 1)
    // A window as wide as the slot count already asks every slot: take all that is left.
    if (top - bottom + 1 >= parts.slots) bottom = blockOf(opts.lowest)
    const lo = Math.max(opts.lowest, bottom * block)
    const slots = new Set<number>()
    for (let b = top; b >= bottom && slots.size < parts.slots; b--) slots.add(parts.slotOf(token, b))
    // endpoint_id and the id range first: the embedded engine evaluates a filter's fields in order
    // and stops at the first that fails, so other endpoints' and other blocks' documents cost a
    // string and a number comparison, not a regular expression.
    const filter = { endpoint_id: token, id: { $gte: lo, $lte: hi }, ...search } as Filter<CaptureDoc>
    const found = await bounded(
      [...slots].map((s) => () => parts.at(s).find(filter).sort({ id: -1 }).limit(need).toArray()),
      PARALLEL,
    )
    const merged = found.flat().sort((a, b) => b.id - a.id)
    out.push(...merged.slice(0, need))
    // Grow by at least GROWTH, more when the hit rate so far says the page needs it.
    const seen = (opts.highest - lo + 1) / block
    const wanted = out.length ? Math.ceil(((opts.limit - out.length) * seen) / out.length) : 0
    width = Math.max((top - bottom + 1) * GROWTH, wanted)
    hi = lo - 1
  }
  return out
}
