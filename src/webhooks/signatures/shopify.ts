// Shopify: X-Shopify-Hmac-Sha256 = base64 HMAC-SHA256 of the body, keyed with the app's client
// secret (or, for webhooks made in the shop admin, the signing secret shown there). No timestamp
// is signed (X-Shopify-Triggered-At is not covered by the HMAC), so there is no tolerance.
import { badRequest } from '../../platform/http/errors.ts'
import { base64Of, header, hmac, matchAny, type SignatureScheme } from './scheme.ts'

export const shopify: SignatureScheme = {
  id: 'shopify',
  name: 'Shopify',
  header: 'X-Shopify-Hmac-Sha256',
  tolerance: null,
  check(input) {
    const sig = base64Of(header(input, 'X-Shopify-Hmac-Sha256')?.trim() ?? '', 32)
    if (!sig) throw badRequest('X-Shopify-Hmac-Sha256 header is malformed (expected the base64 of 32 bytes)')
    return { timestamp: null, signatures: 1, matched: matchAny([sig], hmac('sha256', input.secret, input.body)) }
  },
}
