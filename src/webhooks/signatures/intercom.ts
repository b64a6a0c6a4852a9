// Intercom: X-Hub-Signature = "sha1=" + hex HMAC-SHA1(the app's client secret, body), as
// Intercom's "Webhooks › Signed notifications" describes (GitHub's legacy SHA-1 header is the same
// scheme). No timestamp is signed.
import { hexSignature, hmac, matchAny, type SignatureScheme } from './scheme.ts'

export const intercom: SignatureScheme = {
  id: 'intercom',
  name: 'Intercom',
  header: 'X-Hub-Signature',
  tolerance: null,
  check(input) {
    const sig = hexSignature(input, 'X-Hub-Signature', 'sha1=', 20)
    return { timestamp: null, signatures: 1, matched: matchAny([sig], hmac('sha1', input.secret, input.body)) }
  },
}
