// Pausing and resuming forwarding per endpoint. While paused, captures are stored as always and
// their forward attempts are held (forward.ts marks them `paused` instead of sending). Resuming
// enqueues one job that sends the held requests one at a time in capture-id order, so the target
// sees them in the order they arrived; a held request that then fails continues its schedule.
import { clock } from '../../platform/clock.ts'
import { enqueueDurably } from '../../platform/queue/outbox.ts'
import type { Platform } from '../../platform/platform.ts'
import { captureCollection, capturesAfter } from '../store/capture-store.ts'
import { endpoints } from '../store/endpoint-store.ts'
import { continueSchedule, forwardAttempt } from './forward.ts'
import { captureForwardResumeContract } from '../job-contracts.ts'

export async function setForwardPaused(platform: Platform, token: string, paused: boolean): Promise<void> {
  await endpoints(platform.db).updateOne({ _id: token }, { $set: { forward_paused: paused } })
  if (!paused) await enqueueDurably(platform, captureForwardResumeContract, { endpoint_id: token, resumed_at: clock.nowMs() })
}

/** The resume job: held requests oldest first, each attempt awaited before the next. */
export async function sendPaused(platform: Platform, token: string): Promise<{ sent: number }> {
  let sent = 0
  let from = 0
  for (;;) {
    const ep = await endpoints(platform.db).findOne({ _id: token })
    if (!ep || ep.forward_paused) return { sent } // paused again: the next resume carries on
    const [cap] = await capturesAfter(platform.db, token, { after: from, top: ep.seq, limit: 1 }, { 'forward.status': 'paused' })
    if (!cap?.forward) return { sent }
    from = cap.id
    const ref = { endpoint_id: token, request_id: cap.id, round: cap.forward.round, attempt: cap.forward.paused_attempt ?? 1 }
    await captureCollection(platform.db, token, cap.id).updateOne({ _id: cap._id, 'forward.status': 'paused' }, { $set: { 'forward.status': 'pending' } })
    // The rest of its schedule, as the forward job would have done.
    await continueSchedule(platform, ref, await forwardAttempt(platform, ref))
    sent++
  }
}
