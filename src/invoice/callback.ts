// The batch completion callback: a Standard Webhooks message (webhook-id, webhook-timestamp,
// webhook-signature) signed with the batch's own secret, POSTed through the safe fetch. The
// message id is stable across retries so receivers can drop duplicates.
import { randomBytes } from 'node:crypto'
import { Webhook } from 'standardwebhooks'
import { clock } from '../platform/clock.ts'
import type { Platform } from '../platform/platform.ts'
import { safeFetch } from '../platform/safe-fetch.ts'
import type { BatchDoc } from './batch-store.ts'

export const CALLBACK_EVENT = 'invoice.batch.finished'
const TIMEOUT_MS = 10_000

export function newCallbackSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`
}

export function callbackPayload(batch: BatchDoc): string {
  return JSON.stringify({
    type: CALLBACK_EVENT,
    timestamp: (batch.finished_at ?? clock.now()).toISOString(),
    data: {
      batch_id: batch._id,
      status: batch.status,
      total: batch.total,
      counts: batch.counts,
      status_url: batch.status_url,
      archive_url: batch.archive_url,
    },
  })
}

export type DeliveryOutcome = { ok: true; status: number } | { ok: false; status?: number; error: string; permanent: boolean }

export async function deliverCallback(platform: Platform, batch: BatchDoc): Promise<DeliveryOutcome> {
  const cb = batch.callback!
  const body = callbackPayload(batch)
  const msgId = `msg_batch_${batch._id}`
  const now = clock.now()
  const signature = new Webhook(cb.secret).sign(msgId, now, body)
  try {
    const res = await safeFetch(cb.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'user-agent': 'queueworks-invoice-callback/1',
        'webhook-id': msgId,
        'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
        'webhook-signature': signature,
      },
      body: Buffer.from(body),
      timeoutMs: TIMEOUT_MS,
      maxBytes: 64 * 1024,
      allowPrivate: platform.config.outboundAllowPrivate,
    })
    if (res.status >= 200 && res.status < 300) return { ok: true, status: res.status }
    return { ok: false, status: res.status, error: `receiver answered ${res.status}`, permanent: false }
  } catch (err: any) {
    // An address the guard refuses or a malformed URL will not get better with retries.
    const permanent = err?.code === 'blocked' || err?.code === 'invalid_url'
    return { ok: false, error: String(err?.message ?? err), permanent }
  }
}
