// Ingress side of a replay: record it, enqueue capture-replay, wait (bounded) for the job, then
// read the outcome from MongoDB, the source of truth. Unreachable target → 502, too slow → 504.
import { captureReplayJob } from '../../jobs/capture-replay.ts'
import { clock } from '../platform/clock.ts'
import { HttpError, badRequest, unavailable } from '../platform/http/errors.ts'
import { randomId } from '../platform/ids.ts'
import { enqueue } from '../platform/job.ts'
import type { Platform } from '../platform/platform.ts'
import { QueueName } from '../platform/queue-names.ts'
import { inlineBytes } from './body-store.ts'
import { encodeBody } from './present.ts'
import { replays, type ReplayDoc } from './replays.ts'

const POLL_MS = 1_000

export async function replayNow(platform: Platform, ref: { account_id: string; endpoint_id: string; request_id: number }, url: string) {
  const id = randomId()
  await replays(platform.db).insertOne({ _id: id, ...ref, url, created_at: clock.now(), state: 'pending' })
  try {
    await enqueue(platform, captureReplayJob, { replay_id: id }, { jobId: id })
  } catch {
    await replays(platform.db).updateOne({ _id: id }, { $set: { state: 'failed', error: { code: 'unavailable', message: 'queue unavailable' } } })
    throw unavailable()
  }
  // The job's own timeout plus room for the queue.
  const deadline = Date.now() + platform.config.WEBHOOK_FORWARD_TIMEOUT_MS + 10_000 // wall time, not business time
  let doc: ReplayDoc | null = null
  for (;;) {
    doc = await replays(platform.db).findOne({ _id: id })
    if (!doc || doc.state !== 'pending') break
    const left = deadline - Date.now()
    if (left <= 0) break
    await platform.queues.nextSettled(QueueName.CaptureReplay, id, Math.min(left, POLL_MS))
  }
  if (doc?.state === 'done' && doc.result) {
    return { status: doc.result.status, headers: doc.result.headers, ...encodeBody(inlineBytes(doc.result.body)) }
  }
  if (!doc || doc.state === 'pending') {
    await platform.queues.queue(QueueName.CaptureReplay).remove(id).catch(() => undefined)
    throw new HttpError(504, 'Replay timed out: the target did not answer in time')
  }
  const e = doc.error ?? { code: 'network', message: 'unknown error' }
  if (e.code === 'blocked') throw badRequest(`url is not allowed: ${e.message}`)
  if (e.code === 'invalid_url') throw badRequest(`url ${e.message.replace(/^URL /, '')}`)
  if (e.code === 'timeout') throw new HttpError(504, `Replay target timed out: ${e.message}`)
  if (e.code === 'gone') throw new HttpError(404, 'Request not found')
  throw new HttpError(502, `Replay target unreachable: ${e.message}`)
}
