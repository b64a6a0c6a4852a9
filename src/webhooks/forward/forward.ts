// One forward attempt of a captured request: send it (same method, headers minus hop-by-hop,
// exact body) to the endpoint's forward URL + sub-path + query through safe-fetch, record the
// attempt, update the delivery state and tell open live streams. Every attempt of one capture
// carries the same delivery id header, so a receiver can drop a duplicate (a worker that died
// after sending is taken over, and sends again). A run claims its attempt before sending
// (forward-claim.ts), so a re-run of a job whose lock expired while it was still sending waits
// for that send's record instead of sending twice. The retry schedule lives in forward-schedule.ts.
import { createHash } from 'node:crypto'
import type { Platform } from '../../platform/platform.ts'
import { WEBHOOKS_LIMITS } from '../../platform/plans.ts'
import { getAccount } from '../../platform/accounts.ts'
import { clock } from '../../platform/clock.ts'
import { logger } from '../../platform/logger.ts'
import { isDuplicateKey } from '../../platform/store/mongo.ts'
import { metrics, type ForwardOutcome } from '../../platform/ops/metrics.ts'
import { OutboundError, safeFetch } from '../../platform/outbound/safe-fetch.ts'
import { getBody } from '../store/body-store.ts'
import { attemptCollection, captureCollection, captureKey, getCapture, type AttemptDoc } from '../store/capture-store.ts'
import { endpoints } from '../store/endpoint-store.ts'
import { countDead, recordAttemptOutcome } from '../store/forward-stats.ts'
import { publishLive } from '../live/live-hub.ts'
import { outboundHeaders, SubPathEscapeError, targetUrl } from './outbound.ts'
import { forwardSchedule, scheduleForward } from './forward-schedule.ts'
import { claimOrAwait, forwardLeaseMs, releaseClaim } from './forward-claim.ts'
import { presentAttempt, presentForward } from '../store/present.ts'

export interface ForwardRef {
  endpoint_id: string
  request_id: number
  round: number
  attempt: number
}

/** `refused`: failed for good, the same request can never be sent (its path escapes the target). */
export type AttemptOutcome = 'skipped' | 'delivered' | 'failed' | 'refused'

/** Why a forward owed when its endpoint's forward_url was removed is dead-lettered instead of sent. */
export const FORWARDING_STOPPED = 'not sent: forwarding was turned off for this endpoint (forward_url removed); set a forward_url, then retry or recover it'

/** The header every forward of a capture carries, the same on every attempt and retry round. */
export const DELIVERY_ID_HEADER = 'Queueworks-Delivery-Id'

/** Opaque (the capture URL's token must not reach the target) and stable per capture. */
export function deliveryId(endpointId: string, requestId: number): string {
  return createHash('sha256').update(`${endpointId}.${requestId}`).digest('base64url').slice(0, 27)
}

/** What a recorded attempt means to a run that finds it (a re-run after a crash or a lost lock). */
const recordedOutcome = (a: AttemptDoc): AttemptOutcome => (a.ok ? 'delivered' : a.permanent ? 'refused' : 'failed')

const attemptKey = (r: ForwardRef) => `${captureKey(r.endpoint_id, r.request_id)}.${r.round}.${r.attempt}`

const statsFailed = (err: unknown) => logger.warn({ err: (err as Error).message }, 'forward stats not updated (the endpoints overview may be off)')

/** Make attempt `ref.attempt`, unless it was already made (a re-run after a crash reports it). */
export async function forwardAttempt(platform: Platform, ref: ForwardRef): Promise<AttemptOutcome> {
  const { db, config } = platform
  const cap = await getCapture(db, ref.endpoint_id, ref.request_id)
  // Dead already: forwarding was stopped (forward-stop.ts) while this attempt was queued.
  if (!cap?.forward || cap.forward.round !== ref.round || cap.forward.status === 'delivered' || cap.forward.status === 'dead') return 'skipped'
  const done = await attemptCollection(db, ref.endpoint_id, ref.request_id).findOne({ _id: attemptKey(ref) })
  if (done) return recordedOutcome(done)

  const ep = await endpoints(db).findOne({ _id: ref.endpoint_id })
  const account = ep ? await getAccount(db, ep.account_id) : null
  if (ep?.forward_paused) {
    // Held, not attempted: the resume job sends held requests in capture order (forward-pause.ts).
    await captureCollection(db, ref.endpoint_id, ref.request_id).updateOne(
      { _id: cap._id, 'forward.round': ref.round, 'forward.status': { $ne: 'delivered' } },
      { $set: { 'forward.status': 'paused', 'forward.paused_attempt': ref.attempt, 'forward.next_attempt_at': null } },
    )
    await publishForward(platform, ref)
    return 'skipped'
  }
  let status: number | null = null
  let error: string | null = null
  let url = ep?.forward_url ?? ''
  let outcome: ForwardOutcome = 'success'
  let permanent = false
  let started = performance.now()
  let claim: string | null = null
  if (!ep?.forward_url) {
    // Forwarding was turned off after this request was captured: dead-lettered at once, with the
    // reason, rather than retried against nothing (forward-stop.ts does the same for the rest).
    error = FORWARDING_STOPPED
    permanent = true
  } else if (!account || !WEBHOOKS_LIMITS[account.plan].forwarding) error = `forwarding is not available on the ${account?.plan ?? 'free'} plan`
  else {
    const c = await claimOrAwait(db, ref, attemptKey(ref), forwardLeaseMs(config))
    if ('done' in c) return recordedOutcome(c.done) // another run sent it (and records the rest)
    claim = c.owner
    started = performance.now()
    try {
      url = targetUrl(ep.forward_url, cap.sub_path, cap.query)
      const body = await getBody(db, cap)
      const res = await safeFetch(url, {
        method: cap.method,
        headers: [...outboundHeaders(cap.raw_headers, new URL(url), body.length), DELIVERY_ID_HEADER, deliveryId(ref.endpoint_id, ref.request_id)],
        body: body.length ? body : undefined,
        timeoutMs: config.WEBHOOK_FORWARD_TIMEOUT_MS,
        maxBytes: 10 * 1024 * 1024,
        allowPrivate: config.outboundAllowPrivate,
      })
      status = res.status
      if (status < 200 || status >= 300) {
        error = `target answered ${status}`
        outcome = 'http_error'
      }
    } catch (err) {
      error = (err as Error).message
      const code = err instanceof OutboundError ? err.code : null
      outcome = code === 'timeout' ? 'timeout' : code === 'blocked' || code === 'invalid_url' ? 'blocked' : 'network_error'
      if (err instanceof SubPathEscapeError) {
        outcome = 'blocked'
        permanent = true
      }
    }
  }
  if (error !== null && outcome === 'success') outcome = 'blocked' // refused before any request (plan, no URL)
  const ok = error === null
  const now = clock.now()
  const doc: AttemptDoc = {
    _id: attemptKey(ref),
    capture: cap._id,
    endpoint_id: ref.endpoint_id,
    request_id: ref.request_id,
    round: ref.round,
    attempt: ref.attempt,
    url,
    at: now,
    status,
    latency_ms: Math.round(performance.now() - started),
    error,
    ok,
    ...(permanent ? { permanent } : {}),
  }
  try {
    await attemptCollection(db, doc.endpoint_id, doc.request_id).insertOne(doc)
  } catch (err) {
    if (!isDuplicateKey(err)) throw err
    return ok ? 'delivered' : permanent ? 'refused' : 'failed' // a concurrent run recorded this attempt and its state
  } finally {
    // Recorded (or not, on an error: then a re-run may send at once rather than after the lease).
    if (claim) await releaseClaim(db, attemptKey(ref), claim)
  }
  metrics.forwardAttempt(outcome)
  // The overview's figures never hold up a forward: a failed write there is logged and skipped.
  await recordAttemptOutcome(db, ref.endpoint_id, { ok, status, error, at: now }).catch(statsFailed)
  const coll = captureCollection(db, ref.endpoint_id, ref.request_id)
  const update = {
    $set: {
      // A refusal is final at once: left as 'retrying' until continueSchedule marks it dead, a
      // requeue (a worker's first start on a new Redis) would schedule the next attempt.
      'forward.status': ok ? 'delivered' : permanent ? 'dead' : 'retrying',
      'forward.last_status': status,
      'forward.last_error': error,
      'forward.next_attempt_at': null,
      'forward.delivered_at': ok ? now : null,
    },
    $inc: { 'forward.attempts': 1 },
  }
  // Forwarding may have been stopped while this attempt was out (forward-stop.ts dead-lettered it):
  // a failure leaves it dead, a delivery (to the target of the time) is one dead letter fewer.
  // The usual case first (one write); the dead-letter case only when that one matched nothing.
  let moved = await coll.updateOne({ _id: cap._id, 'forward.round': ref.round, 'forward.status': { $ne: 'dead' } }, update)
  if (ok && moved.matchedCount === 0) {
    moved = await coll.updateOne({ _id: cap._id, 'forward.round': ref.round, 'forward.status': 'dead' }, update)
    if (moved.modifiedCount) await countDead(db, ref.endpoint_id, -1).catch(statsFailed)
  }
  if (permanent && moved.modifiedCount === 1) await countDead(db, ref.endpoint_id, 1).catch(statsFailed)
  await publishForward(platform, ref, doc)
  return ok ? 'delivered' : permanent ? 'refused' : 'failed'
}

/**
 * After an attempt: the next one of its schedule (automatic round: the configured delays;
 * a manual retry round: one attempt), or the dead letter after the last or a refusal.
 */
export async function continueSchedule(platform: Platform, ref: ForwardRef, outcome: AttemptOutcome): Promise<{ outcome: string; next_in_ms?: number }> {
  if (outcome !== 'failed' && outcome !== 'refused') return { outcome }
  const schedule = ref.round === 0 ? forwardSchedule(platform.config) : [0]
  if (outcome === 'refused' || ref.attempt >= schedule.length) {
    await markDead(platform, ref)
    return { outcome: 'dead' }
  }
  const delay = schedule[ref.attempt]!
  await markRetryAt(platform, ref, new Date(clock.nowMs() + delay))
  await scheduleForward(platform, { ...ref, attempt: ref.attempt + 1 }, delay)
  return { outcome, next_in_ms: delay }
}

/** Tell open streams the delivery state changed (and the attempt that changed it, if any). */
export async function publishForward(platform: Platform, ref: ForwardRef, attempt?: AttemptDoc): Promise<void> {
  const cap = await getCapture(platform.db, ref.endpoint_id, ref.request_id)
  if (!cap?.forward) return
  const data = { id: cap.id, forward: presentForward(cap.forward), ...(attempt ? { attempt: presentAttempt(attempt) } : {}) }
  await publishLive(platform, ref.endpoint_id, { type: 'forward', id: cap.id, data })
}

export async function markRetryAt(platform: Platform, ref: ForwardRef, at: Date): Promise<void> {
  await captureCollection(platform.db, ref.endpoint_id, ref.request_id).updateOne(
    { _id: captureKey(ref.endpoint_id, ref.request_id), 'forward.round': ref.round, 'forward.status': { $nin: ['delivered', 'dead'] } },
    { $set: { 'forward.status': 'retrying', 'forward.next_attempt_at': at } },
  )
  await publishForward(platform, ref)
}

/** After the last attempt: dead-lettered until someone retries it by hand. */
export async function markDead(platform: Platform, ref: ForwardRef): Promise<void> {
  const r = await captureCollection(platform.db, ref.endpoint_id, ref.request_id).updateOne(
    { _id: captureKey(ref.endpoint_id, ref.request_id), 'forward.round': ref.round, 'forward.status': { $ne: 'delivered' } },
    { $set: { 'forward.status': 'dead', 'forward.next_attempt_at': null } },
  )
  // Counted once: a capture already dead (a refusal, or a re-run of this step) is not modified.
  if (r.modifiedCount === 1) await countDead(platform.db, ref.endpoint_id, 1).catch(statsFailed)
  metrics.forwardAttempt('dead_lettered')
  await publishForward(platform, ref)
}
