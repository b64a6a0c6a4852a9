// Linear: Linear-Signature = hex HMAC-SHA256(webhook signing secret, body). The signed time is the
// body's `webhookTimestamp` (Unix milliseconds); Linear's SDK (LinearWebhookClient.verify) refuses
// a body without it or more than 60 s from the clock, so the same 60 s apply here.
import { hexSignature, hmac, matchAny, type SignatureScheme } from './scheme.ts'

function webhookTimestamp(body: Buffer): number | null {
  try {
    const t = (JSON.parse(body.toString('utf8')) as { webhookTimestamp?: unknown })?.webhookTimestamp
    // Within the range of a Date (±8.64e15 ms), so the answer can show it.
    return typeof t === 'number' && Math.abs(t) <= 8.64e15 ? t / 1000 : null
  } catch {
    return null
  }
}

export const linear: SignatureScheme = {
  id: 'linear',
  name: 'Linear',
  header: 'Linear-Signature',
  tolerance: 60,
  check(input) {
    const sig = hexSignature(input, 'Linear-Signature', '', 32)
    const timestamp = webhookTimestamp(input.body)
    return {
      timestamp,
      signatures: 1,
      matched: matchAny([sig], hmac('sha256', input.secret, input.body)),
      ...(timestamp === null ? { invalid: 'signature matches, but the body has no webhookTimestamp (a time in Unix milliseconds), which Linear signs and its SDK requires' } : {}),
    }
  },
}
