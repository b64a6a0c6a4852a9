// Turning forwarding off (PATCH …/endpoints/{token} with forward_url null): every forward still
// owed (pending, retrying, or held while paused) is dead-lettered at once with the reason, so
// nothing is dropped silently; setting a forward_url again and retrying or recovering them sends
// them to the new target. A job of one of them still queued finds it dead and does nothing; an
// attempt already on its way is recorded as it ends (forward.ts).
import type { Platform } from '../../platform/platform.ts'
import { logger } from '../../platform/logger.ts'
import { captures, endpointSlots } from '../store/capture-store.ts'
import { countDead } from '../store/forward-stats.ts'
import { FORWARDING_STOPPED, publishForward } from './forward.ts'

const OWED = ['pending', 'retrying', 'paused'] as const

/** Dead-letter the forwards endpoint `ep` still owes; how many. */
export async function deadLetterOwed(platform: Platform, ep: { _id: string; seq: number }): Promise<number> {
  const { db } = platform
  const token = ep._id
  let n = 0
  // The endpoint's captures are spread over slots; each slot's endpoint_id index keeps this to its own.
  await captures(db).eachSlot(async (slot) => {
    const owed = await slot.find({ endpoint_id: token, 'forward.status': { $in: [...OWED] } }, { projection: { _id: 1, id: 1, forward: 1 } }).toArray()
    for (const cap of owed) {
      const r = await slot.updateOne(
        { _id: cap._id, 'forward.round': cap.forward!.round, 'forward.status': { $in: [...OWED] } },
        { $set: { 'forward.status': 'dead', 'forward.last_error': FORWARDING_STOPPED, 'forward.next_attempt_at': null } },
      )
      if (r.modifiedCount !== 1) continue
      n++
      await countDead(db, token, 1).catch((err: Error) => logger.warn({ err: err.message }, 'forward stats not updated'))
      await publishForward(platform, { endpoint_id: token, request_id: cap.id, round: cap.forward!.round, attempt: 0 })
    }
  }, endpointSlots(db, ep))
  return n
}
