// Discord interactions: X-Signature-Ed25519 = hex Ed25519 signature of X-Signature-Timestamp +
// body, checked with the application's public key (64 hex digits, Developer Portal › General
// Information), which the caller passes as `secret`. Discord documents no tolerance and its
// discord-interactions verifier checks none, so none is applied.
import { createPublicKey, verify, type KeyObject } from 'node:crypto'
import { badRequest } from '../../platform/http/errors.ts'
import { header, type SignatureScheme } from './scheme.ts'

function publicKey(secret: string): KeyObject {
  const hex = secret.trim()
  if (!/^[0-9a-fA-F]{64}$/.test(hex)) {
    throw badRequest("secret must be the application's public key for Discord: 64 hex digits (Developer Portal › General Information › Public Key)")
  }
  return createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(hex, 'hex').toString('base64url') }, format: 'jwk' })
}

export const discord: SignatureScheme = {
  id: 'discord',
  name: 'Discord',
  header: 'X-Signature-Ed25519',
  tolerance: null,
  check(input) {
    const sigHex = header(input, 'X-Signature-Ed25519')?.trim() ?? ''
    if (!/^[0-9a-fA-F]{128}$/.test(sigHex)) throw badRequest('X-Signature-Ed25519 header is malformed (expected 128 hex digits)')
    const ts = header(input, 'X-Signature-Timestamp')
    if (ts === undefined || ts === '') throw badRequest('X-Signature-Timestamp header is required for Discord')
    const key = publicKey(input.secret)
    const ok = verify(null, Buffer.concat([Buffer.from(ts, 'utf8'), input.body]), key, Buffer.from(sigHex, 'hex'))
    return {
      timestamp: /^\d{1,12}$/.test(ts) ? Number(ts) : null,
      signatures: 1,
      matched: ok ? 0 : null,
      mismatch: 'signature does not match: wrong public key, or the body or timestamp was changed after it was signed',
    }
  },
}
