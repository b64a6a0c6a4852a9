// Ingress side of a replay: record it, enqueue capture-replay, wait (bounded) for the job, then
// read the outcome from MongoDB, the source of truth. Unreachable target → 502, too slow → 504.
import { admitToQueue } from '../../platform/queue/admission.ts'
import { awaitOutcome } from '../../platform/queue/await-outcome.ts'
import { clock } from '../../platform/clock.ts'
import { badGateway, badRequest, gatewayTimeout, notFound, unavailable } from '../../platform/http/errors.ts'
import { randomId } from '../../platform/ids.ts'
import { enqueueAwaited } from '../../platform/queue/job.ts'
import type { Platform } from '../../platform/platform.ts'
import { inlineBytes } from '../store/body-store.ts'
import { captureReplayContract } from '../job-contracts.ts'
import { encodeBody } from '../store/present.ts'
import { replays } from '../store/replay-store.ts'

export async function replayNow(platform: Platform, ref: { account_id: string; endpoint_id: string; request_id: number }, url: string) {
  // No worker to run it: refused at once rather than a 504 after the whole wait (nothing recorded).
  await admitToQueue(platform, captureReplayContract.queue, 0)
  const id = randomId()
  await replays(platform.db).insertOne({ _id: id, ...ref, url, created_at: clock.now(), state: 'pending' })
  try {
    await enqueueAwaited(platform, captureReplayContract, { replay_id: id })
  } catch {
    await replays(platform.db).updateOne({ _id: id }, { $set: { state: 'failed', error: { code: 'unavailable', message: 'queue unavailable' } } })
    throw unavailable()
  }
  const doc = await awaitOutcome(platform, {
    queue: captureReplayContract.queue,
    jobId: id,
    // The job's own timeout plus room for the queue.
    timeoutMs: platform.config.WEBHOOK_FORWARD_TIMEOUT_MS + 10_000,
    read: async () => {
      const d = await replays(platform.db).findOne({ _id: id })
      return d?.state === 'pending' ? undefined : d
    },
  })
  if (doc?.state === 'done' && doc.result) {
    return { status: doc.result.status, headers: doc.result.headers, ...encodeBody(inlineBytes(doc.result.body)) }
  }
  if (!doc) {
    await platform.queues.queue(captureReplayContract.queue).remove(id).catch(() => undefined)
    throw gatewayTimeout('Replay timed out: the target did not answer in time')
  }
  const e = doc.error ?? { code: 'network', message: 'unknown error' }
  if (e.code === 'blocked') throw badRequest(`url is not allowed: ${e.message}`)
  if (e.code === 'invalid_url') throw badRequest(`url ${e.message.replace(/^URL /, '')}`)
  if (e.code === 'timeout') throw gatewayTimeout(`Replay target timed out: ${e.message}`)
  if (e.code === 'gone') throw notFound('Request not found')
  throw badGateway(`Replay target unreachable: ${e.message}`)
}
