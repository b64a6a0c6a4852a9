// One awaited job through a topology's Redis (cluster, Sentinel): a worker that only hands
// WAKE_BYTES over with its wake, the job enqueued to be awaited, and what woke the wait. Nobody
// reads the queue's event stream, so only the worker's wake settles the wait before its 30 s
// bound (null after it).
import { z } from 'zod'
import { defineJob, defineJobContract, enqueueAwaited, wakeWith } from '../../src/platform/queue/job.ts'
import type { JobSettled } from '../../src/platform/queue/queues.ts'
import { closeWorkers, registerWorker } from '../../src/platform/queue/workers.ts'
import type { Platform } from '../../src/platform/platform.ts'

/** Binary, with the wake message's own separator and bytes that are not UTF-8 in it. */
export const WAKE_BYTES = Buffer.from([0x25, 0x50, 0x44, 0x46, 0x0a, 0x00, 0xff, 0xfe, 0x0a, 0x41])

export async function awaitedJobWake(platform: Platform, queue: string): Promise<JobSettled | null> {
  const c = defineJobContract({ queue, schema: z.object({ n: z.number() }), id: (p) => `w-${p.n}` })
  const w = await registerWorker(platform, defineJob(c, {
      async process(_p, job) {
        wakeWith(job, WAKE_BYTES)
      },
    }))
  try {
    const woken = platform.queues.nextSettled(c.queue, 'w-1', 30_000)
    await enqueueAwaited(platform, c, { n: 1 })
    return await woken
  } finally {
    await closeWorkers([w], 2_000)
  }
}
