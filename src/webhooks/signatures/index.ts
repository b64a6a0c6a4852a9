// Signature check of a stored request: the registry of sender schemes (one file each in this
// folder) and the answer of POST …/requests/{id}/verify. The senders' own verifiers compare the
// signed timestamp with *now*; here it is compared with received_at, which answers the useful
// question ("would my receiver have accepted this delivery?") however long ago it was captured.
// docs/webhooks.md (Signature verification) lists the schemes and what each needs.
import { badRequest } from '../../platform/http/errors.ts'
import { wireTime } from '../store/time.ts'
import { discord } from './discord.ts'
import { github } from './github.ts'
import { intercom } from './intercom.ts'
import { linear } from './linear.ts'
import { paddle } from './paddle.ts'
import { MISMATCH, type SignatureScheme } from './scheme.ts'
import { sendgrid } from './sendgrid.ts'
import { shopify } from './shopify.ts'
import { slack } from './slack.ts'
import { square } from './square.ts'
import { standardWebhooks, svix } from './standard-webhooks.ts'
import { stripe } from './stripe.ts'
import { twilio } from './twilio.ts'
import { zoom } from './zoom.ts'

/** In detection order: the first whose header a request carries is its scheme. GitHub comes
 * before Intercom because GitHub also sends the SHA-1 X-Hub-Signature Intercom uses. */
const REGISTRY: SignatureScheme[] = [stripe, paddle, standardWebhooks, svix, github, shopify, slack, twilio, sendgrid, square, zoom, discord, linear, intercom]

/** The `scheme` values a caller may ask for (the request schema's enum). */
export const SCHEMES = [
  'github', 'stripe', 'paddle', 'standard-webhooks', 'svix', 'shopify', 'slack', 'twilio', 'square', 'zoom', 'intercom', 'linear', 'discord', 'sendgrid',
] as const
export type Scheme = (typeof SCHEMES)[number]

const BY_ID = new Map<string, SignatureScheme>(REGISTRY.map((s) => [s.id, s]))
// The enum is written out for its literal types; a scheme file added to one list only fails at load.
if (BY_ID.size !== SCHEMES.length || SCHEMES.some((id) => !BY_ID.has(id))) throw new Error('signatures: SCHEMES and the registry differ')

export interface VerifyResult {
  valid: boolean
  scheme: string
  reason: string
  signatures: number
  matched_signature: number | null
  signed_at: string | null
  received_at: string
  tolerance_seconds: number | null
  /** The URL the signature was checked for (Twilio, Square), else null. */
  signed_url: string | null
}

export function detectScheme(headers: Record<string, string>): SignatureScheme | null {
  return REGISTRY.find((s) => headers[s.header.toLowerCase()]) ?? null
}

export function verifySignature(opts: {
  scheme?: Scheme
  headers: Record<string, string>
  secret: string
  body: Buffer
  receivedAt: Date
  /** The URL the sender signed (Twilio, Square). */
  url: string
}): VerifyResult {
  let scheme = opts.scheme ? BY_ID.get(opts.scheme) : detectScheme(opts.headers)
  // Svix signs exactly like Standard Webhooks, so asking for the latter on a Svix delivery is
  // answered for what it is rather than refused for lacking webhook-* headers.
  if (scheme === standardWebhooks && !opts.headers['webhook-signature'] && opts.headers['svix-signature']) scheme = svix
  if (!scheme) throw badRequest(`No signature header found (looked for ${REGISTRY.map((s) => s.header).join(', ')})`)
  if (opts.headers[scheme.header.toLowerCase()] === undefined) {
    const found = detectScheme(opts.headers)
    throw badRequest(`${scheme.name} signs with the ${scheme.header} header, which this request does not carry${found ? ` (it carries ${found.header}: ${found.id})` : ''}`)
  }
  const p = scheme.check({ headers: opts.headers, body: opts.body, secret: opts.secret, url: opts.url })
  const base = {
    scheme: scheme.id,
    signatures: p.signatures,
    matched_signature: p.matched === null ? null : p.matched + 1,
    signed_at: p.timestamp === null ? null : wireTime(new Date(p.timestamp * 1000)),
    received_at: wireTime(opts.receivedAt),
    tolerance_seconds: scheme.tolerance,
    signed_url: p.signedUrl ?? null,
  }
  const several = p.signatures > 1 ? ` (${p.signatures} signatures: the sender is rotating secrets)` : ''
  if (p.matched === null) {
    return { ...base, valid: false, reason: `${p.mismatch ?? MISMATCH}${several ? `; none of the ${p.signatures} signatures matched` : ''}` }
  }
  if (p.invalid) return { ...base, valid: false, reason: p.invalid }
  if (p.timestamp !== null && scheme.tolerance !== null) {
    const skew = Math.round(opts.receivedAt.getTime() / 1000 - p.timestamp)
    if (Math.abs(skew) > scheme.tolerance) {
      return {
        ...base,
        valid: false,
        reason: `signature matches, but the timestamp is outside the sender's tolerance: signed ${Math.abs(skew)} s ${skew >= 0 ? 'before' : 'after'} it was received (tolerance ${scheme.tolerance} s)`,
      }
    }
  }
  return { ...base, valid: true, reason: `signature ${p.matched + 1} of ${p.signatures} matches${several}` }
}
