// Worker side of a replay: send the stored request (original method, headers minus hop-by-hop,
// exact body) to the caller's URL through safe-fetch and store the answer or the failure.
import { Binary } from 'mongodb'
import type { Platform } from '../../platform/platform.ts'
import { OutboundError, safeFetch } from '../../platform/outbound/safe-fetch.ts'
import { getBody } from '../store/body-store.ts'
import { getCapture } from '../store/capture-store.ts'
import { outboundHeaders } from '../forward/outbound.ts'
import { replays } from '../store/replay-store.ts'

export async function runReplay(platform: Platform, replayId: string): Promise<{ state: string }> {
  const { db, config } = platform
  const rp = await replays(db).findOne({ _id: replayId })
  if (!rp || rp.state !== 'pending') return { state: rp?.state ?? 'missing' }
  const cap = await getCapture(db, rp.endpoint_id, rp.request_id)
  if (!cap) {
    await replays(db).updateOne({ _id: replayId }, { $set: { state: 'failed', error: { code: 'gone', message: 'Request not found' } } })
    return { state: 'failed' }
  }
  try {
    const body = await getBody(db, cap)
    const res = await safeFetch(rp.url, {
      method: cap.method,
      headers: outboundHeaders(cap.raw_headers, new URL(rp.url), body.length),
      body: body.length ? body : undefined,
      timeoutMs: config.WEBHOOK_FORWARD_TIMEOUT_MS,
      maxBytes: 10 * 1024 * 1024,
      allowPrivate: config.outboundAllowPrivate,
    })
    await replays(db).updateOne(
      { _id: replayId },
      { $set: { state: 'done', result: { status: res.status, headers: res.headers, body: new Binary(res.body) } } },
    )
    return { state: 'done' }
  } catch (err) {
    const code = err instanceof OutboundError ? err.code : 'network'
    await replays(db).updateOne({ _id: replayId }, { $set: { state: 'failed', error: { code, message: (err as Error).message } } })
    return { state: 'failed' }
  }
}
