// Zoom: x-zm-signature = "v0=" + hex HMAC-SHA256(webhook secret token, "v0:<ts>:<body>") with
// ts = x-zm-request-timestamp (Unix seconds), as Zoom's "Using webhooks › Verify webhook events"
// describes. Zoom documents no tolerance and its sample verifier checks none, so none is applied;
// signed_at still shows the signed time.
import { hexSignature, hmac, matchAny, secondsHeader, type SignatureScheme } from './scheme.ts'

export const zoom: SignatureScheme = {
  id: 'zoom',
  name: 'Zoom',
  header: 'x-zm-signature',
  tolerance: null,
  check(input) {
    const sig = hexSignature(input, 'x-zm-signature', 'v0=', 32)
    const ts = secondsHeader(input, 'x-zm-request-timestamp', 'Zoom')
    return { timestamp: ts, signatures: 1, matched: matchAny([sig], hmac('sha256', input.secret, `v0:${ts}:`, input.body)) }
  },
}
