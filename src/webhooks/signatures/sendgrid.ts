// SendGrid Event Webhook: X-Twilio-Email-Event-Webhook-Signature = base64 DER ECDSA P-256/SHA-256
// signature of X-Twilio-Email-Event-Webhook-Timestamp + body, checked with the verification key
// (Mail Settings › Signed Event Webhook: base64 DER, or the same as PEM), which the caller passes
// as `secret`. SendGrid documents no tolerance and @sendgrid/eventwebhook checks none.
import { createPublicKey, verify, type KeyObject } from 'node:crypto'
import { badRequest } from '../../platform/http/errors.ts'
import { header, type SignatureScheme } from './scheme.ts'

const SIGNATURE = 'X-Twilio-Email-Event-Webhook-Signature'
const TIMESTAMP = 'X-Twilio-Email-Event-Webhook-Timestamp'
const KEY_ERROR = "secret must be the verification key for SendGrid: an ECDSA P-256 public key, base64 (MFkw…) or PEM"

function publicKey(secret: string): KeyObject {
  const b64 = secret.replace(/-----(BEGIN|END) PUBLIC KEY-----/g, '').replace(/\s+/g, '')
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(b64)) throw badRequest(KEY_ERROR)
  let key: KeyObject
  try {
    key = createPublicKey({ key: Buffer.from(b64, 'base64'), format: 'der', type: 'spki' })
  } catch {
    throw badRequest(KEY_ERROR)
  }
  if (key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== 'prime256v1') throw badRequest(KEY_ERROR)
  return key
}

/** SEQUENCE { INTEGER r, INTEGER s } with r and s of 1 to 33 bytes: Node's verify answers a plain
 * false for anything else, which would read as a wrong key rather than a broken header. */
function isDerSignature(sig: Buffer): boolean {
  if (sig.length < 8 || sig.length > 72 || sig[0] !== 0x30 || sig[1] !== sig.length - 2) return false
  let at = 2
  for (let i = 0; i < 2; i++) {
    const len = sig[at + 1] ?? 0
    if (sig[at] !== 0x02 || len < 1 || len > 33) return false
    at += 2 + len
  }
  return at === sig.length
}

export const sendgrid: SignatureScheme = {
  id: 'sendgrid',
  name: 'SendGrid',
  header: SIGNATURE,
  tolerance: null,
  check(input) {
    const sigB64 = header(input, SIGNATURE)?.trim() ?? ''
    const sig = /^[A-Za-z0-9+/]+={0,2}$/.test(sigB64) ? Buffer.from(sigB64, 'base64') : null
    if (!sig || !isDerSignature(sig)) {
      throw badRequest(`${SIGNATURE} header is malformed (expected a base64 DER ECDSA signature)`)
    }
    const ts = header(input, TIMESTAMP)
    if (ts === undefined || ts === '') throw badRequest(`${TIMESTAMP} header is required for SendGrid`)
    const key = publicKey(input.secret)
    let ok: boolean
    try {
      ok = verify('sha256', Buffer.concat([Buffer.from(ts, 'utf8'), input.body]), { key, dsaEncoding: 'der' }, sig)
    } catch {
      throw badRequest(`${SIGNATURE} header is malformed (expected a base64 DER ECDSA signature)`)
    }
    return {
      timestamp: /^\d{1,12}$/.test(ts) ? Number(ts) : null,
      signatures: 1,
      matched: ok ? 0 : null,
      mismatch: 'signature does not match: wrong verification key, or the body or timestamp was changed after it was signed',
    }
  },
}
