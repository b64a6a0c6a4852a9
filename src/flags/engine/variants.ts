// Weighted variants: a rule, or the flag's fallthrough, serves one of several named values split
// by weight (e.g. 50/30/20). The user's bucket (murmur3 of "<flag key>:variants:" + the stickiness
// attribute, 0..9999, the same hash as percent rollouts with its own prefix so that a user's
// variant does not follow their rollout bucket) picks a variant by the variants' bucket ranges (laid out contiguously in the listed order when the split is new, then
// kept with the flag: variant-allocation.ts), so a change of weights moves only the users it must.
import { textOf, type EvalContext } from './context.ts'
import { rolloutBuckets } from './percent-bucket.ts'
import { basisPoints, rangesOf } from './variant-allocation.ts'

export { basisPoints } from './variant-allocation.ts'

export interface Variant {
  name: string
  /** Percent, up to two decimals; a split's weights sum to 100. */
  weight: number
  value: unknown
  /** Buckets owned ([start, end) ranges of 0..9999), kept with the flag: variant-allocation.ts. */
  buckets?: [number, number][]
}

export interface Split {
  variants: Variant[]
  /** The context attribute bucketed; default targetingKey, else user_id. */
  stickiness?: string
}

export const MAX_VARIANTS = 20
export const DEFAULT_STICKINESS = ['targetingKey', 'user_id'] as const
export const VARIANT_NAME_RE = /^[A-Za-z0-9._-]{1,64}$/

/** Why a split cannot be served, or null; `field` names it in the message. */
export function invalidSplit(variants: Variant[]): string | null {
  const names = new Set<string>()
  for (const v of variants) {
    if (names.has(v.name)) return `names must be unique ("${v.name}" appears twice)`
    names.add(v.name)
  }
  const bp = basisPoints(variants.map((v) => v.weight))
  if (!bp) return 'weights must have at most two decimals'
  const sum = bp.reduce((a, b) => a + b, 0)
  if (sum !== 10_000) return `weights must sum to 100 (they sum to ${sum / 100})`
  return null
}

type Ctx = EvalContext

/** The bucket (0..9999) of a user for this flag's variants. */
export function variantBucketer(flagKey: string, stickiness: string | undefined): (ctx: Ctx) => number {
  const bucket = rolloutBuckets(`${flagKey}:variants:`)
  if (stickiness !== undefined) return (ctx) => bucket(textOf(ctx[stickiness]) ?? '')
  // Without an id every such user gets the same (first-bucket) variant: deterministic, never random.
  return (ctx) => bucket(textOf(ctx.targetingKey) ?? textOf(ctx.user_id) ?? '')
}

/** Picks one of `results` (one per variant, in order) by the user's bucket and the buckets each variant owns. */
export function compileSplit<R>(flagKey: string, split: Split, results: R[]): (ctx: Ctx) => R {
  const bucketOf = variantBucketer(flagKey, split.stickiness)
  // Every owned range in bucket order: its end and its variant's result. A new split has one
  // range per variant; each change of weights adds at most a few.
  const ranges = rangesOf(split.variants)
    .flatMap((rs, i) => rs.map(([s, e]) => ({ s, e, r: results[i]! })))
    .sort((x, y) => x.s - y.s)
  const ends = ranges.map((x) => x.e)
  const rs = ranges.map((x) => x.r)
  const n = ends.length
  return (ctx) => {
    const b = bucketOf(ctx)
    let i = 0
    while (i < n - 1 && b >= ends[i]!) i++
    return rs[i]!
  }
}
