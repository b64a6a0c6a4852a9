// What one sender's signature scheme is (its header, tolerance and check), and the small helpers
// the HMAC schemes share. index.ts lists the schemes; each sender is one file next to this one.
import { createHmac, timingSafeEqual } from 'node:crypto'
import { badRequest } from '../../platform/http/errors.ts'

/** What a scheme is checked against: the stored request, and what the caller gave /verify. */
export interface CheckInput {
  /** Request headers, names lower-cased, repeated ones joined with ", " (as stored). */
  headers: Record<string, string>
  /** The exact stored body bytes. */
  body: Buffer
  /** The `secret` of the /verify request: a shared secret, or a public key for Discord and SendGrid. */
  secret: string
  /** The URL the sender signed (Twilio, Square): the caller's `url`, else the capture's public URL. */
  url: string
}

export interface Checked {
  /** Signed time in seconds since the epoch (fractions allowed), or null when the scheme signs none. */
  timestamp: number | null
  /** How many signatures the header carries (several while a sender rotates secrets). */
  signatures: number
  /** 0-based index of the signature that matched, or null. */
  matched: number | null
  /** The URL the signature covers, for schemes that sign one. */
  signedUrl?: string
  /** Why a non-matching signature fails, when the generic "wrong secret or changed body" says too little. */
  mismatch?: string
  /** A reason the request fails although a signature matches (e.g. a body hash that disagrees). */
  invalid?: string
}

export interface SignatureScheme {
  /** Identifier used as `scheme` in requests and answers. */
  id: string
  /** Display name of the sender. */
  name: string
  /** The header whose presence identifies the scheme, as the sender spells it. */
  header: string
  /** Timestamp tolerance of the sender's own verifier in seconds; null when it checks none. */
  tolerance: number | null
  check(input: CheckInput): Checked
}

export const MISMATCH = 'signature does not match: wrong secret, or the body was changed after it was signed'

/** Header lengths are bounded before decoding: a stored header may be up to the capture limit. */
const MAX_HEADER = 4_096

export function header(input: CheckInput, name: string): string | undefined {
  const v = input.headers[name.toLowerCase()]
  if (v !== undefined && v.length > MAX_HEADER) throw badRequest(`${name} header is too long to be a signature (${v.length} characters)`)
  return v
}

export function hmac(algorithm: 'sha256' | 'sha1', key: string | Buffer, ...parts: (string | Buffer)[]): Buffer {
  const h = createHmac(algorithm, key)
  for (const p of parts) h.update(p)
  return h.digest()
}

export function same(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b)
}

/** Index of the first signature equal to `expected`, or null. */
export function matchAny(signatures: Buffer[], expected: Buffer): number | null {
  const i = signatures.findIndex((s) => same(s, expected))
  return i >= 0 ? i : null
}

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/

/** Decodes strict base64 of exactly `bytes` bytes, or null (Node's decoder silently skips garbage). */
export function base64Of(s: string, bytes: number): Buffer | null {
  if (!BASE64.test(s) || s.length % 4 !== 0) return null
  const b = Buffer.from(s, 'base64')
  return b.length === bytes ? b : null
}

/** A timestamp header of whole seconds, or a 400 naming it. */
export function secondsHeader(input: CheckInput, name: string, scheme: string): number {
  const v = header(input, name)
  if (v === undefined) throw badRequest(`${name} header is required for ${scheme}`)
  if (!/^\d{1,12}$/.test(v.trim())) throw badRequest(`${name} header is malformed (expected Unix seconds)`)
  return Number(v.trim())
}

/** One `<prefix><hex>` signature header (GitHub, Slack, Zoom, Intercom, Linear). */
export function hexSignature(input: CheckInput, name: string, prefix: string, bytes: number): Buffer {
  const v = header(input, name)?.trim() ?? ''
  const m = new RegExp(`^${prefix.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}([0-9a-fA-F]{${bytes * 2}})$`).exec(v)
  if (!m) throw badRequest(`${name} header is malformed (expected ${prefix}<${bytes * 2} hex digits>)`)
  return Buffer.from(m[1]!, 'hex')
}
