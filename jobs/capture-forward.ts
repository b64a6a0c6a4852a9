// capture-forward: one delivery attempt of a captured request to its endpoint's forward URL.
// A failed attempt schedules the next one as a delayed job with its own id; after the last, the
// delivery is dead-lettered.
import { clock } from '../src/platform/clock.ts'
import { defineJob } from '../src/platform/job.ts'
import { forwardAttempt, markDead, markRetryAt } from '../src/webhooks/forward.ts'
import { forwardSchedule, scheduleForward } from '../src/webhooks/forward-schedule.ts'
import { captureForwardContract } from '../src/webhooks/job-contracts.ts'

export const captureForwardJob = defineJob(captureForwardContract, {
  concurrency: 20,
  async process(ref, _job, platform) {
    const outcome = await forwardAttempt(platform, ref)
    if (outcome !== 'failed') return { outcome }
    const schedule = ref.round === 0 ? forwardSchedule(platform.config) : [0]
    if (ref.attempt >= schedule.length) {
      await markDead(platform, ref)
      return { outcome: 'dead' }
    }
    const delay = schedule[ref.attempt]!
    await markRetryAt(platform, ref, new Date(clock.nowMs() + delay))
    await scheduleForward(platform, { ...ref, attempt: ref.attempt + 1 }, delay)
    return { outcome, next_in_ms: delay }
  },
})
