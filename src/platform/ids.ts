// Random identifiers and API keys. Never sequential; keys are stored only as SHA-256 hashes.
import { hash, randomBytes } from 'node:crypto'

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'

/** n base62 characters from a CSPRNG (rejection sampling keeps them uniform). */
export function base62(n: number): string {
  let out = ''
  while (out.length < n) {
    for (const b of randomBytes(n * 2)) {
      if (b < 248 && out.length < n) out += ALPHABET[b % 62]
    }
  }
  return out
}

/** 22 base62 chars ≈ 131 bits. */
export function randomId(): string {
  return base62(22)
}

/** prefix + 40 base62 chars ≈ 238 bits. */
export function newApiKey(prefix: string): string {
  return prefix + base62(40)
}

/** Hex SHA-256. The one-shot crypto.hash (Node ≥ 20.12) costs less than half of a Hash object: every evaluation request hashes its SDK key. */
export function sha256(s: string): string {
  return hash('sha256', s, 'hex')
}
