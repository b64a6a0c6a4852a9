// Re-enqueue forwards MongoDB says are owed (pending or retrying), for when Redis lost its queued
// and delayed jobs (platform/queue/self-heal.ts). The next attempt of the current round is the one
// after those recorded; its job id is the attempt's, so a forward still queued is not doubled,
// and a forward attempt already made is never made again (forward.ts checks its record).
import { clock } from '../../platform/clock.ts'
import type { Platform } from '../../platform/platform.ts'
import { attemptCollection, captures, slotsInUse } from '../store/capture-store.ts'
import { forwardSchedule, scheduleForward } from './forward-schedule.ts'

export async function requeueForwards(platform: Platform): Promise<number> {
  const schedule = forwardSchedule(platform.config)
  let n = 0
  // A scan of every slot that can hold a capture, only when Redis lost its data (and on a worker's
  // first start on a new Redis). A new store has none: its start does not read 1,000 empty slots.
  await captures(platform.db).eachSlot(async (slot) => {
    const cursor = slot.find({ 'forward.status': { $in: ['pending', 'retrying'] } }, { projection: { _id: 1, endpoint_id: 1, id: 1, forward: 1 } })
    for await (const cap of cursor) {
      const f = cap.forward!
      const made = await attemptCollection(platform.db, cap.endpoint_id, cap.id).countDocuments({ capture: cap._id, round: f.round })
      const attempt = made + 1
      if (attempt > (f.round === 0 ? schedule.length : 1)) continue // its last attempt's job marks it dead
      const delay = f.next_attempt_at ? Math.max(0, f.next_attempt_at.getTime() - clock.nowMs()) : 0
      await scheduleForward(platform, { endpoint_id: cap.endpoint_id, request_id: cap.id, round: f.round, attempt }, delay)
      n++
    }
  }, await slotsInUse(platform.db))
  return n
}
