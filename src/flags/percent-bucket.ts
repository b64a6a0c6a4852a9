// Percentage rollout buckets (DESIGN.md §7): murmur3 x86 32-bit, seed 0, over the UTF-8 bytes of
// flagKey + attribute value; bucket = floor(h × 10000 / 2^32) / 100, in [0, 99.99].
// Pure and deterministic; the scratch buffer only avoids an allocation per hash on the hot path.
import murmurhash from 'murmurhash'

const encoder = new TextEncoder()
const scratch = new Uint8Array(1024)
// One view per length, made once: `murmurhash` reads key.length, so it needs an exact-size view.
const views: Uint8Array[] = []

function viewOf(length: number): Uint8Array {
  return (views[length] ??= scratch.subarray(0, length))
}

/** murmur3 x86 32-bit (seed 0) of the UTF-8 encoding of `s`. */
export function murmur3(s: string): number {
  const r = encoder.encodeInto(s, scratch)
  // Longer than the scratch buffer: let the library encode it (allocates, but such keys are rare).
  if (r.read! < s.length) return murmurhash.v3(s, 0)
  return murmurhash.v3(viewOf(r.written!), 0)
}

/** The bucket in hundredths of a percent: 0..9999. */
export function bucketBasisPoints(flagKey: string, value: string): number {
  return Math.floor((murmur3(flagKey + value) * 10_000) / 4_294_967_296)
}

/** The bucket as a percentage with two decimals: 0..99.99. */
export function bucketOf(flagKey: string, value: string): number {
  return bucketBasisPoints(flagKey, value) / 100
}

/** A user is in a rollout of `percent` when their bucket is below it. */
export function inRollout(flagKey: string, value: string, percent: number): boolean {
  return bucketOf(flagKey, value) < percent
}
