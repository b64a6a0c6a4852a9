// GitHub: X-Hub-Signature-256 = "sha256=" + hex HMAC-SHA256(secret, body). No timestamp is signed.
import { hexSignature, hmac, matchAny, type SignatureScheme } from './scheme.ts'

export const github: SignatureScheme = {
  id: 'github',
  name: 'GitHub',
  header: 'X-Hub-Signature-256',
  tolerance: null,
  check(input) {
    const sig = hexSignature(input, 'X-Hub-Signature-256', 'sha256=', 32)
    return { timestamp: null, signatures: 1, matched: matchAny([sig], hmac('sha256', input.secret, input.body)) }
  },
}
