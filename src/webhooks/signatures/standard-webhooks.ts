// Standard Webhooks (webhook-id, webhook-timestamp, webhook-signature) and Svix, which signs the
// same way under svix-* names: each "v1,<base64>" in the space-separated signature header is an
// HMAC-SHA256 of "<id>.<timestamp>.<body>" keyed with the base64 part of "whsec_<base64>".
// Both reference libraries allow 300 s.
import { badRequest } from '../../platform/http/errors.ts'
import { header, hmac, matchAny, type SignatureScheme } from './scheme.ts'

function scheme(id: 'standard-webhooks' | 'svix', name: string, prefix: 'webhook' | 'svix'): SignatureScheme {
  const names = { id: `${prefix}-id`, timestamp: `${prefix}-timestamp`, signature: `${prefix}-signature` }
  return {
    id,
    name,
    header: names.signature,
    tolerance: 300,
    check(input) {
      const msgId = header(input, names.id)
      const ts = header(input, names.timestamp)
      if (!msgId || !ts || !/^\d{1,12}$/.test(ts)) throw badRequest(`${names.id} and ${names.timestamp} headers are required for ${name}`)
      const sigs = (header(input, names.signature) ?? '')
        .split(' ')
        .map((s) => s.split(','))
        .filter(([v, s]) => v === 'v1' && s)
        .map(([, s]) => Buffer.from(s!, 'base64'))
      if (!sigs.length) throw badRequest(`${names.signature} header is malformed (expected v1,<base64>)`)
      const key = Buffer.from(input.secret.replace(/^whsec_/, ''), 'base64')
      if (!key.length) throw badRequest(`secret must be a ${name} secret (whsec_<base64>)`)
      return { timestamp: Number(ts), signatures: sigs.length, matched: matchAny(sigs, hmac('sha256', key, `${msgId}.${ts}.`, input.body)) }
    },
  }
}

export const standardWebhooks = scheme('standard-webhooks', 'Standard Webhooks', 'webhook')
export const svix = scheme('svix', 'Svix', 'svix')
