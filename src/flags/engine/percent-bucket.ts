// Percentage rollout buckets (docs/flags.md, "Rules"): murmur3 x86 32-bit, seed 0, over the UTF-8
// bytes of
// flagKey + attribute value; bucket = floor(h × 10000 / 2^32) / 100, in [0, 99.99].
// Pure and deterministic; the scratch buffer only avoids an allocation per hash. The engine uses
// rolloutBuckets, the same function with the flag key's part of the hash done once per flag.
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

const C1 = 0xcc9e2d51
const C2 = 0x1b873593

/** A block's scrambled value, as murmur3 x86 32-bit XORs it into the state (Math.imul: multiplication mod 2^32). */
function scramble(k1: number): number {
  k1 = Math.imul(k1, C1)
  return Math.imul((k1 << 15) | (k1 >>> 17), C2)
}

/** One whole 4-byte block mixed into the state. */
function mixBlock(h1: number, k1: number): number {
  h1 ^= scramble(k1)
  h1 = (h1 << 13) | (h1 >>> 19)
  return (Math.imul(h1, 5) + 0xe6546b64) | 0
}

/**
 * bucketBasisPoints(flagKey, ·) for one flag, as a function of the value. A flag's rollout hashes
 * flagKey + value for every user: the key's whole blocks are mixed once here, and an ASCII value
 * (the usual user id) is read straight from the string, with no concatenation or UTF-8 encoding.
 * Other values take bucketBasisPoints; the results are the same (tests compare them).
 */
export function rolloutBuckets(flagKey: string): (value: string) => number {
  const key = encoder.encode(flagKey)
  const whole = key.length & ~3
  let prefix = 0
  for (let i = 0; i < whole; i += 4) prefix = mixBlock(prefix, key[i]! | (key[i + 1]! << 8) | (key[i + 2]! << 16) | (key[i + 3]! << 24))
  const rest = key.subarray(whole)
  let restBlock = 0
  for (let i = 0; i < rest.length; i++) restBlock |= rest[i]! << (8 * i)
  const restLength = rest.length
  return (value) => {
    let h1 = prefix
    let k1 = restBlock
    let n = restLength
    const length = value.length
    let i = 0
    // The key's partial block first, then whole blocks of four characters (one test of the four
    // for non-ASCII, one mix), then the tail.
    if (n > 0) {
      for (; n < 4 && i < length; i++, n++) {
        const c = value.charCodeAt(i)
        if (c >= 0x80) return bucketBasisPoints(flagKey, value)
        k1 |= c << (8 * n)
      }
      if (n === 4) {
        h1 = mixBlock(h1, k1)
        k1 = 0
        n = 0
      }
    }
    for (; i + 4 <= length; i += 4) {
      const c0 = value.charCodeAt(i)
      const c1 = value.charCodeAt(i + 1)
      const c2 = value.charCodeAt(i + 2)
      const c3 = value.charCodeAt(i + 3)
      if ((c0 | c1 | c2 | c3) >= 0x80) return bucketBasisPoints(flagKey, value)
      h1 = mixBlock(h1, c0 | (c1 << 8) | (c2 << 16) | (c3 << 24))
    }
    for (; i < length; i++, n++) {
      const c = value.charCodeAt(i)
      if (c >= 0x80) return bucketBasisPoints(flagKey, value)
      k1 |= c << (8 * n)
    }
    if (n > 0) h1 ^= scramble(k1)
    h1 ^= key.length + value.length
    h1 ^= h1 >>> 16
    h1 = Math.imul(h1, 0x85ebca6b)
    h1 ^= h1 >>> 13
    h1 = Math.imul(h1, 0xc2b2ae35)
    h1 ^= h1 >>> 16
    return Math.floor(((h1 >>> 0) * 10_000) / 4_294_967_296)
  }
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
