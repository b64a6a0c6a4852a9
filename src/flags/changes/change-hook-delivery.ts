// Flag-change webhooks at work: fanning a committed change out to the project's webhooks
// (dispatchChange, one delivery per webhook), and delivering one signed event (deliverOne): the
// Standard Webhooks message of the change, signed with the webhook's own secret and posted through
// the safe fetch, every attempt kept in the delivery log.
import type { Job } from 'bullmq'
import { clock } from '../../platform/clock.ts'
import { enqueueMany } from '../../platform/queue/job.ts'
import type { Platform } from '../../platform/platform.ts'
import { openSecret } from '../../platform/secret-box.ts'
import { deliverSigned } from '../../platform/outbound/signed-webhook.ts'
import { deliveryId, ensureDelivery, getDelivery, recordAttempt, setDeliveryState } from './change-hook-delivery-store.ts'
import { getEntry, markDispatched, type HistoryDoc } from './history-store.ts'
import { flagWebhookDeliverContract } from '../job-contracts.ts'
import { getWebhook, webhooksFor } from './change-hook-store.ts'

const DELIVERY_TIMEOUT_MS = 10_000

/** The event body: `{type, timestamp, data}` as Standard Webhooks recommends. */
export function eventBody(e: HistoryDoc): string {
  return JSON.stringify({
    type: e.type,
    timestamp: e.at.toISOString(),
    data: {
      change_id: e._id,
      project_id: e.project_id,
      [e.kind === 'flag' ? 'key' : 'name']: e.target,
      environment: e.environment ?? null,
      actor: e.actor,
      before: e.before,
      after: e.after ?? null,
      changes: e.changes ?? [],
    },
  })
}

export type DispatchResult = { state: 'pending' | 'gone' } | { state: 'dispatched'; deliveries: number }

/** Create the deliveries of a committed change and queue them; an entry still pending is not ready yet. */
export async function dispatchChange(platform: Platform, projectId: string, changeId: string): Promise<DispatchResult> {
  const { db } = platform
  const e = await getEntry(db, projectId, changeId)
  if (!e) return { state: 'gone' }
  if (e.state === 'pending') return { state: 'pending' }
  if (e.dispatch !== 'pending') return { state: 'dispatched', deliveries: 0 }
  const hooks = await webhooksFor(db, projectId, e.type!, e.environment ?? null)
  for (const h of hooks) {
    await ensureDelivery(db, { _id: deliveryId(e._id, h._id), webhook_id: h._id, project_id: projectId, account_id: e.account_id, change_id: e._id, type: e.type! })
  }
  // Job ids are the delivery ids: a dispatch that runs again adds nothing twice.
  await enqueueMany(platform, flagWebhookDeliverContract, hooks.map((h) => ({ payload: { delivery_id: deliveryId(e._id, h._id), webhook_id: h._id } })))
  await markDispatched(db, projectId, e._id)
  return { state: 'dispatched', deliveries: hooks.length }
}

export type DeliverResult = { state: 'delivered' | 'skipped' | 'failed' | 'pending'; status?: number; error?: string; permanent?: boolean }

/** One attempt at a delivery; it fails for good on a permanent error or the job's last attempt. */
export async function deliverOne(platform: Platform, webhookId: string, id: string, manual: boolean, job: Pick<Job, 'attemptsMade' | 'opts'>): Promise<DeliverResult> {
  const { db } = platform
  const d = await getDelivery(db, webhookId, id)
  if (!d) return { state: 'skipped' }
  if (d.state !== 'pending') return { state: d.state }
  const hook = await getWebhook(db, d.project_id, webhookId)
  const entry = hook && (await getEntry(db, d.project_id, d.change_id))
  if (!hook || !entry) {
    // The webhook was deleted, or the change left retention, while the delivery waited.
    await setDeliveryState(db, d, 'skipped')
    return { state: 'skipped' }
  }
  const out = await deliverSigned({
    url: hook.url,
    secret: await openSecret(platform, hook.secret_sealed),
    msgId: `msg_${entry._id}`,
    body: eventBody(entry),
    userAgent: 'queueworks-flags-webhook/1',
    timeoutMs: DELIVERY_TIMEOUT_MS,
    allowPrivate: platform.config.outboundAllowPrivate,
  })
  const attempt = {
    at: clock.now(),
    status: out.status ?? null,
    latency_ms: out.latencyMs,
    error: out.ok ? null : out.error,
    response_excerpt: out.excerpt ?? null,
    manual,
  }
  if (out.ok) {
    await recordAttempt(db, d, attempt, 'delivered')
    return { state: 'delivered', status: out.status }
  }
  const last = out.permanent || job.attemptsMade + 1 >= (job.opts.attempts ?? 1)
  await recordAttempt(db, d, attempt, last ? 'failed' : 'pending')
  return { state: last ? 'failed' : 'pending', status: out.status, error: out.error, permanent: out.permanent }
}
