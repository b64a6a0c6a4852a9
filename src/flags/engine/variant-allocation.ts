// Which buckets (0..9999, basis points of the variant hash) each variant of a split owns, kept with
// the flag so that a change of weights moves only the share of users the change requires. A new
// split lays its variants out contiguously in the listed order (as splits always were, so flags
// stored before allocations existed keep every assignment). On a change of weights, a variant that
// shrinks gives back its highest buckets, a removed variant gives back all of its own, and the
// variants that grow (new ones included) take the freed buckets, lowest first, in listed order.
// Nothing else moves: the users who change variant are exactly those in freed buckets, i.e. the
// total weight that shrank, and no user leaves a variant whose weight did not shrink.

export const BUCKETS = 10_000

/** What allocation needs of a variant (variants.ts has the full type). */
export interface Weighted {
  name: string
  /** Percent, up to two decimals. */
  weight: number
  /** The buckets owned, as stored with the flag; absent on splits stored before allocations. */
  buckets?: [number, number][]
}
type Variant = Weighted
type Split = { variants: Variant[]; stickiness?: string }

/** Weights in basis points (hundredths of a percent); null when one has more than two decimals. */
export function basisPoints(weights: number[]): number[] | null {
  const out: number[] = []
  for (const w of weights) {
    const bp = Math.round(w * 100)
    if (Math.abs(bp - w * 100) > 1e-6) return null
    out.push(bp)
  }
  return out
}

/** Half-open bucket ranges [start, end), sorted, not adjacent. */
export type Ranges = [number, number][]

export const size = (rs: Ranges) => rs.reduce((n, [s, e]) => n + e - s, 0)

/** Today's layout: contiguous ranges in the listed order (50/30/20 → [0,5000), [5000,8000), [8000,10000)). */
export function contiguous(weights: number[]): Ranges[] {
  let at = 0
  return weights.map((w) => (w === 0 ? [] : [[at, (at += w)]]))
}

/** The split's allocation: as stored when it is complete and matches the weights, else contiguous. */
export function rangesOf(variants: readonly Variant[]): Ranges[] {
  const bp = basisPoints(variants.map((v) => v.weight))!
  const stored = variants.map((v) => v.buckets)
  if (stored.every((b): b is Ranges => Array.isArray(b)) && isCover(stored, bp)) return stored
  return contiguous(bp)
}

/** Every bucket owned exactly once, each variant owning exactly its weight (checked on every compile: ranges, not buckets). */
function isCover(all: Ranges[], bp: number[]): boolean {
  const flat: [number, number][] = []
  for (const [i, rs] of all.entries()) {
    let n = 0
    for (const r of rs) {
      if (!Array.isArray(r) || r.length !== 2) return false
      const [s, e] = r
      if (!Number.isInteger(s) || !Number.isInteger(e) || s < 0 || e > BUCKETS || s >= e) return false
      flat.push([s, e])
      n += e - s
    }
    if (n !== bp[i]) return false
  }
  // Sorted by start, the ranges must tile 0..BUCKETS: no gap, no overlap.
  flat.sort((x, y) => x[0] - y[0])
  let at = 0
  for (const [s, e] of flat) {
    if (s !== at) return false
    at = e
  }
  return at === BUCKETS
}

function toRanges(buckets: number[]): Ranges {
  const out: Ranges = []
  for (const b of buckets.sort((x, y) => x - y)) {
    const last = out[out.length - 1]
    if (last && last[1] === b) last[1] = b + 1
    else out.push([b, b + 1])
  }
  return out
}

function bucketsOf(rs: Ranges): number[] {
  const out: number[] = []
  for (const [s, e] of rs) for (let b = s; b < e; b++) out.push(b)
  return out
}

/** The next split's variants with their buckets, moving as few as the new weights allow. */
export function reallocate<V extends Variant>(previous: readonly Variant[] | undefined, next: readonly V[]): V[] {
  const bp = basisPoints(next.map((v) => v.weight))!
  if (!previous) return next.map((v, i) => ({ ...strip(v), buckets: contiguous(bp)[i]! }))
  const before = rangesOf(previous)
  const owned = new Map(previous.map((v, i) => [v.name, bucketsOf(before[i]!)]))
  const free: number[] = []
  for (const [name, bs] of owned) if (!next.some((v) => v.name === name)) free.push(...bs)
  const keep = next.map((v, i) => {
    const bs = owned.get(v.name) ?? []
    if (bs.length <= bp[i]!) return bs
    free.push(...bs.slice(bp[i]!)) // the highest buckets go
    return bs.slice(0, bp[i]!)
  })
  free.sort((x, y) => x - y)
  let at = 0
  return next.map((v, i) => {
    const want = bp[i]! - keep[i]!.length
    const got = keep[i]!.concat(free.slice(at, (at += want)))
    return { ...strip(v), buckets: toRanges(got) }
  })
}

const strip = <V extends Variant>({ buckets: _, ...v }: V): V => v as V

/** What the API shows of a variant: its allocation is internal. */
export const variantView = <V extends Variant>(v: V): V => strip(v)

type Splittable = { variants?: Variant[]; stickiness?: string }

/**
 * The previous split a new rule's split continues: the old rule at the same index when it shares a
 * variant name, else the unused old split sharing the most names (ties: the nearest index); none
 * shares a name → a new split.
 */
function predecessor(old: readonly (Splittable | undefined)[], used: Set<number>, index: number, next: Variant[]): Variant[] | undefined {
  const names = new Set(next.map((v) => v.name))
  const shared = (j: number) => (old[j]?.variants ?? []).filter((v) => names.has(v.name)).length
  if (!used.has(index) && shared(index) > 0) return used.add(index), old[index]!.variants
  let best = -1
  for (let j = 0; j < old.length; j++) {
    if (used.has(j) || shared(j) === 0) continue
    if (best < 0 || shared(j) > shared(best) || (shared(j) === shared(best) && Math.abs(j - index) < Math.abs(best - index))) best = j
  }
  if (best < 0) return undefined
  used.add(best)
  return old[best]!.variants
}

/** Rules and fallthrough of a write, their splits allocated against the state they replace. */
export function allocateSplits<R extends Splittable, F extends Split>(
  previous: { rules?: readonly Splittable[]; fallthrough?: Split | null } | undefined,
  rules: R[] | undefined,
  fallthrough: F | null | undefined,
): { rules: R[] | undefined; fallthrough: F | null | undefined } {
  const used = new Set<number>()
  const oldRules = previous?.rules ?? []
  return {
    rules: rules?.map((r, i) => (r.variants ? { ...r, variants: reallocate(predecessor(oldRules, used, i, r.variants), r.variants) } : r)),
    fallthrough: fallthrough ? { ...fallthrough, variants: reallocate(previous?.fallthrough?.variants, fallthrough.variants) } : fallthrough,
  }
}
