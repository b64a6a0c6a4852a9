// Slack: X-Slack-Signature = "v0=" + hex HMAC-SHA256(signing secret, "v0:<ts>:<body>") with
// ts = X-Slack-Request-Timestamp (Unix seconds). Slack's docs and Bolt's verifySlackRequest refuse
// requests more than five minutes old: 300 s.
import { hexSignature, hmac, matchAny, secondsHeader, type SignatureScheme } from './scheme.ts'

export const slack: SignatureScheme = {
  id: 'slack',
  name: 'Slack',
  header: 'X-Slack-Signature',
  tolerance: 300,
  check(input) {
    const sig = hexSignature(input, 'X-Slack-Signature', 'v0=', 32)
    const ts = secondsHeader(input, 'X-Slack-Request-Timestamp', 'Slack')
    return { timestamp: ts, signatures: 1, matched: matchAny([sig], hmac('sha256', input.secret, `v0:${ts}:`, input.body)) }
  },
}
