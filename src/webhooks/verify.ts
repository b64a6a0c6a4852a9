// Signature check of a stored request, for the schemes senders use: GitHub (X-Hub-Signature-256),
// Stripe (Stripe-Signature), Paddle (Paddle-Signature), Standard Webhooks (webhook-signature) and
// Svix (svix-signature: the Standard Webhooks scheme under svix-* header names).
// Each is an HMAC-SHA256 over the exact stored bytes. The senders' own verifiers compare the
// signed timestamp with *now*; here it is compared with received_at, which answers the useful
// question ("would my receiver have accepted this delivery?") however long ago it was captured.
// Tests sign with the senders' libraries and verify with them too, proving the formats match.
import { createHmac, timingSafeEqual } from 'node:crypto'
import { badRequest } from '../platform/http/errors.ts'
import { wireTime } from './time.ts'

export const SCHEMES = ['github', 'stripe', 'paddle', 'standard-webhooks', 'svix'] as const
export type Scheme = (typeof SCHEMES)[number]

/** Timestamp tolerance of each sender's reference verifier, in seconds. */
const TOLERANCE: Record<Scheme, number | null> = { github: null, stripe: 300, paddle: 5, 'standard-webhooks': 300, svix: 300 }

/** Header names of the Standard Webhooks scheme: its own, and Svix's (which signs the same way). */
const STANDARD_HEADERS = {
  'standard-webhooks': { id: 'webhook-id', timestamp: 'webhook-timestamp', signature: 'webhook-signature', name: 'Standard Webhooks' },
  svix: { id: 'svix-id', timestamp: 'svix-timestamp', signature: 'svix-signature', name: 'Svix' },
} as const

export interface VerifyResult {
  valid: boolean
  scheme: Scheme
  reason: string
  signatures: number
  matched_signature: number | null
  signed_at: string | null
  received_at: string
  tolerance_seconds: number | null
}

const MISMATCH = 'signature does not match: wrong secret, or the body was changed after it was signed'

export function detectScheme(headers: Record<string, string>): Scheme | null {
  if (headers['stripe-signature']) return 'stripe'
  if (headers['paddle-signature']) return 'paddle'
  if (headers['webhook-signature']) return 'standard-webhooks'
  if (headers['svix-signature']) return 'svix'
  if (headers['x-hub-signature-256']) return 'github'
  return null
}

function hmac(key: string | Buffer, prefix: string, body: Buffer): Buffer {
  return createHmac('sha256', key).update(prefix).update(body).digest()
}

function same(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b)
}

interface Parsed {
  timestamp: number | null
  signatures: Buffer[]
  expected: Buffer
}

function parse(scheme: Scheme, headers: Record<string, string>, secret: string, body: Buffer): Parsed {
  switch (scheme) {
    case 'github': {
      const m = /^sha256=([0-9a-f]{64})$/i.exec(headers['x-hub-signature-256'] ?? '')
      if (!m) throw badRequest('X-Hub-Signature-256 header is malformed (expected sha256=<hex>)')
      return { timestamp: null, signatures: [Buffer.from(m[1]!, 'hex')], expected: hmac(secret, '', body) }
    }
    case 'stripe': {
      const parts = (headers['stripe-signature'] ?? '').split(',').map((p) => p.trim().split('='))
      const t = parts.find(([k]) => k === 't')?.[1]
      const sigs = parts.filter(([k, v]) => k === 'v1' && /^[0-9a-f]+$/i.test(v ?? '')).map(([, v]) => Buffer.from(v!, 'hex'))
      if (!t || !/^\d+$/.test(t) || !sigs.length) throw badRequest('Stripe-Signature header is malformed (expected t=<time>,v1=<hex>)')
      return { timestamp: Number(t), signatures: sigs, expected: hmac(secret, `${t}.`, body) }
    }
    case 'paddle': {
      const parts = (headers['paddle-signature'] ?? '').split(';').map((p) => p.trim().split('='))
      const ts = parts.find(([k]) => k === 'ts')?.[1]
      const sigs = parts.filter(([k, v]) => k === 'h1' && /^[0-9a-f]+$/i.test(v ?? '')).map(([, v]) => Buffer.from(v!, 'hex'))
      if (!ts || !/^\d+$/.test(ts) || !sigs.length) throw badRequest('Paddle-Signature header is malformed (expected ts=<time>;h1=<hex>)')
      return { timestamp: Number(ts), signatures: sigs, expected: hmac(secret, `${ts}:`, body) }
    }
    case 'standard-webhooks':
    case 'svix': {
      const h = STANDARD_HEADERS[scheme]
      const id = headers[h.id]
      const ts = headers[h.timestamp]
      if (!id || !ts || !/^\d+$/.test(ts)) throw badRequest(`${h.id} and ${h.timestamp} headers are required for ${h.name}`)
      const sigs = (headers[h.signature] ?? '')
        .split(' ')
        .map((s) => s.split(','))
        .filter(([v, s]) => v === 'v1' && s)
        .map(([, s]) => Buffer.from(s!, 'base64'))
      if (!sigs.length) throw badRequest(`${h.signature} header is malformed (expected v1,<base64>)`)
      const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64')
      if (!key.length) throw badRequest(`secret must be a ${h.name} secret (whsec_<base64>)`)
      return { timestamp: Number(ts), signatures: sigs, expected: hmac(key, `${id}.${ts}.`, body) }
    }
  }
}

export function verifySignature(opts: { scheme?: Scheme; headers: Record<string, string>; secret: string; body: Buffer; receivedAt: Date }): VerifyResult {
  let scheme = opts.scheme ?? detectScheme(opts.headers)
  // Svix signs exactly like Standard Webhooks, so asking for the latter on a Svix delivery is
  // answered for what it is rather than refused for lacking webhook-* headers.
  if (scheme === 'standard-webhooks' && !opts.headers['webhook-signature'] && opts.headers['svix-signature']) scheme = 'svix'
  if (!scheme) {
    throw badRequest('No signature header found (looked for X-Hub-Signature-256, Stripe-Signature, Paddle-Signature, webhook-signature, svix-signature)')
  }
  const p = parse(scheme, opts.headers, opts.secret, opts.body)
  const idx = p.signatures.findIndex((s) => same(s, p.expected))
  const tolerance = TOLERANCE[scheme]
  const base = {
    scheme,
    signatures: p.signatures.length,
    matched_signature: idx >= 0 ? idx + 1 : null,
    signed_at: p.timestamp === null ? null : wireTime(new Date(p.timestamp * 1000)),
    received_at: wireTime(opts.receivedAt),
    tolerance_seconds: tolerance,
  }
  const several = p.signatures.length > 1 ? ` (${p.signatures.length} signatures: the sender is rotating secrets)` : ''
  if (idx < 0) return { ...base, valid: false, reason: `${MISMATCH}${several ? `; none of the ${p.signatures.length} signatures matched` : ''}` }
  if (p.timestamp !== null && tolerance !== null) {
    const skew = Math.round(opts.receivedAt.getTime() / 1000 - p.timestamp)
    if (Math.abs(skew) > tolerance) {
      return {
        ...base,
        valid: false,
        reason: `signature matches, but the timestamp is outside the sender's tolerance: signed ${Math.abs(skew)} s ${skew >= 0 ? 'before' : 'after'} it was received (tolerance ${tolerance} s)`,
      }
    }
  }
  return { ...base, valid: true, reason: `signature ${idx + 1} of ${p.signatures.length} matches${several}` }
}
