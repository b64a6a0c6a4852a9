// The batch completion callback: a Standard Webhooks message signed with the batch's own secret
// (src/platform/outbound/signed-webhook.ts signs and posts it). The message id is stable across retries so
// receivers can drop duplicates.
import { clock } from '../../platform/clock.ts'
import type { Platform } from '../../platform/platform.ts'
import { deliverSigned, newWebhookSecret, type DeliveryOutcome } from '../../platform/outbound/signed-webhook.ts'
import type { BatchDoc } from './batch-store.ts'

export const CALLBACK_EVENT = 'invoice.batch.finished'
const TIMEOUT_MS = 10_000

export const newCallbackSecret = newWebhookSecret

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

export async function deliverCallback(platform: Platform, batch: BatchDoc): Promise<DeliveryOutcome> {
  const cb = batch.callback!
  return deliverSigned({
    url: cb.url,
    secret: cb.secret,
    msgId: `msg_batch_${batch._id}`,
    body: callbackPayload(batch),
    userAgent: 'queueworks-invoice-callback/1',
    timeoutMs: TIMEOUT_MS,
    allowPrivate: platform.config.outboundAllowPrivate,
  })
}
