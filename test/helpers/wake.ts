// One awaited job through a topology's Redis (cluster, Sentinel): a no-op worker, the job enqueued
// to be awaited, and what woke the wait. Nobody reads the queue's event stream, so only the
// worker's wake settles the wait before its 30 s bound (null after it).
import { z } from 'zod'
import { defineJob, defineJobContract, enqueueAwaited } from '../../src/platform/queue/job.ts'
import type { JobSettled } from '../../src/platform/queue/queues.ts'
import { closeWorkers, registerWorker } from '../../src/platform/queue/workers.ts'
import type { Platform } from '../../src/platform/platform.ts'

export async function awaitedJobWake(platform: Platform, queue: string): Promise<JobSettled | null> {
  const c = defineJobContract({ queue, schema: z.object({ n: z.number() }), id: (p) => `w-${p.n}` })
  const w = await registerWorker(platform, defineJob(c, { async process() {} }))
  try {
    const woken = platform.queues.nextSettled(c.queue, 'w-1', 30_000)
    await enqueueAwaited(platform, c, { n: 1 })
    return await woken
  } finally {
    await closeWorkers([w], 2_000)
  }
}
