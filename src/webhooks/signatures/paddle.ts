// Paddle Billing: Paddle-Signature = "ts=<seconds>;h1=<hex>[;h1=…]", h1 a hex HMAC-SHA256 of
// "<ts>:<body>". The Paddle SDK allows 5 s.
import { badRequest } from '../../platform/http/errors.ts'
import { header, hmac, matchAny, type SignatureScheme } from './scheme.ts'

export const paddle: SignatureScheme = {
  id: 'paddle',
  name: 'Paddle',
  header: 'Paddle-Signature',
  tolerance: 5,
  check(input) {
    const parts = (header(input, 'Paddle-Signature') ?? '').split(';').map((p) => p.trim().split('='))
    const ts = parts.find(([k]) => k === 'ts')?.[1]
    const sigs = parts.filter(([k, v]) => k === 'h1' && /^[0-9a-f]+$/i.test(v ?? '')).map(([, v]) => Buffer.from(v!, 'hex'))
    if (!ts || !/^\d{1,12}$/.test(ts) || !sigs.length) throw badRequest('Paddle-Signature header is malformed (expected ts=<time>;h1=<hex>)')
    return { timestamp: Number(ts), signatures: sigs.length, matched: matchAny(sigs, hmac('sha256', input.secret, `${ts}:`, input.body)) }
  },
}
