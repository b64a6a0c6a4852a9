// Square: x-square-hmacsha256-signature = base64 HMAC-SHA256(subscription signature key,
// notification URL + body). The notification URL is the one configured at Square, which a proxy
// in front of us may not show: the caller can pass it as `url`. No timestamp is signed.
import { badRequest } from '../../platform/http/errors.ts'
import { base64Of, header, hmac, matchAny, type SignatureScheme } from './scheme.ts'

export const square: SignatureScheme = {
  id: 'square',
  name: 'Square',
  header: 'x-square-hmacsha256-signature',
  tolerance: null,
  check(input) {
    const sig = base64Of(header(input, 'x-square-hmacsha256-signature')?.trim() ?? '', 32)
    if (!sig) throw badRequest('x-square-hmacsha256-signature header is malformed (expected the base64 of 32 bytes)')
    return {
      timestamp: null,
      signatures: 1,
      matched: matchAny([sig], hmac('sha256', input.secret, input.url, input.body)),
      signedUrl: input.url,
      mismatch:
        `signature does not match: wrong signature key, the body was changed, or Square notified another URL than ${input.url} ` +
        '(pass the notification URL of the subscription as `url`)',
    }
  },
}
