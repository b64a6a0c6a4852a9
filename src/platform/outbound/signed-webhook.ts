// Standard Webhooks delivery (https://www.standardwebhooks.com): a message signed with the
// receiver's own secret (webhook-id, webhook-timestamp, webhook-signature headers, by the
// `standardwebhooks` package) and POSTed through the safe fetch (SSRF guard, timeout, size cap).
// Used by the invoice batch callback and the flag-change webhooks.
import { randomBytes } from 'node:crypto'
import { Webhook } from 'standardwebhooks'
import { clock } from '../clock.ts'
import { safeFetch } from './safe-fetch.ts'

/** A new signing secret in the format Standard Webhooks libraries take (`whsec_` + base64 of 32 bytes). */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`
}

export interface SignedDelivery {
  url: string
  secret: string
  /** Stable across retries of one message, so that receivers can drop duplicates. */
  msgId: string
  body: string
  userAgent: string
  allowPrivate: boolean
  timeoutMs?: number
}

export type DeliveryOutcome =
  | { ok: true; status: number; latencyMs: number; excerpt: string }
  | { ok: false; status?: number; error: string; permanent: boolean; latencyMs: number; excerpt?: string }

/** How much of a receiver's answer is read (and kept, as text, in delivery logs). */
const MAX_RESPONSE_BYTES = 64 * 1024
export const EXCERPT_CHARS = 1_000

export async function deliverSigned(d: SignedDelivery): Promise<DeliveryOutcome> {
  const now = clock.now()
  const signature = new Webhook(d.secret).sign(d.msgId, now, d.body)
  const started = performance.now()
  const latency = () => Math.round(performance.now() - started)
  try {
    const res = await safeFetch(d.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'user-agent': d.userAgent,
        'webhook-id': d.msgId,
        'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
        'webhook-signature': signature,
      },
      body: Buffer.from(d.body),
      timeoutMs: d.timeoutMs ?? 10_000,
      maxBytes: MAX_RESPONSE_BYTES,
      allowPrivate: d.allowPrivate,
    })
    const excerpt = res.body.toString('utf8').slice(0, EXCERPT_CHARS)
    if (res.status >= 200 && res.status < 300) return { ok: true, status: res.status, latencyMs: latency(), excerpt }
    return { ok: false, status: res.status, error: `receiver answered ${res.status}`, permanent: false, latencyMs: latency(), excerpt }
  } catch (err: any) {
    // An address the guard refuses or a malformed URL will not get better with retries.
    const permanent = err?.code === 'blocked' || err?.code === 'invalid_url'
    return { ok: false, error: String(err?.message ?? err), permanent, latencyMs: latency() }
  }
}
