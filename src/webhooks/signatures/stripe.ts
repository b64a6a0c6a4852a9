// Stripe: Stripe-Signature = "t=<seconds>,v1=<hex>[,v1=<hex>…]", each v1 a hex HMAC-SHA256 of
// "<t>.<body>"; one v1 per active secret while secrets roll. The stripe library allows 300 s.
import { badRequest } from '../../platform/http/errors.ts'
import { header, hmac, matchAny, type SignatureScheme } from './scheme.ts'

export const stripe: SignatureScheme = {
  id: 'stripe',
  name: 'Stripe',
  header: 'Stripe-Signature',
  tolerance: 300,
  check(input) {
    const parts = (header(input, 'Stripe-Signature') ?? '').split(',').map((p) => p.trim().split('='))
    const t = parts.find(([k]) => k === 't')?.[1]
    const sigs = parts.filter(([k, v]) => k === 'v1' && /^[0-9a-f]+$/i.test(v ?? '')).map(([, v]) => Buffer.from(v!, 'hex'))
    if (!t || !/^\d{1,12}$/.test(t) || !sigs.length) throw badRequest('Stripe-Signature header is malformed (expected t=<time>,v1=<hex>)')
    return { timestamp: Number(t), signatures: sigs.length, matched: matchAny(sigs, hmac('sha256', input.secret, `${t}.`, input.body)) }
  },
}
