// Live events of an endpoint across API replicas: whoever changes a capture (the capture itself,
// a forward attempt, a `listen` CLI's local delivery report) or the endpoint (its settings, a
// pause or resume, its deletion) publishes to the endpoint's Redis channel; every replica holds one subscriber connection and fans messages out to the streams
// open on it. Redis pub/sub is only the wake-up: MongoDB stays the source of truth, and a stream
// that resumes (Last-Event-ID) reads what it missed from there (stream-routes.ts).
import { groupLine } from '../../platform/store/group-line.ts'
import { logger } from '../../platform/logger.ts'
import type { Platform } from '../../platform/platform.ts'
import { createRedis, type RedisClient } from '../../platform/redis/redis.ts'
import { inlineBytes } from '../store/body-store.ts'
import type { CaptureDoc } from '../store/capture-store.ts'
import { presentCapture } from '../store/present.ts'

/** An event about one capture. */
export interface CaptureEvent {
  type: 'capture' | 'forward' | 'local_delivery'
  /** The capture's id (per endpoint); a `capture` event's SSE id. */
  id: number
  data: unknown
}

/**
 * An event about the endpoint itself: `endpoint` carries it as GET …/endpoints/{token} answers it
 * (after a PATCH, a pause, a resume); `endpoint_deleted` ends every stream of it (live-routes.ts).
 */
export interface EndpointEvent {
  type: 'endpoint' | 'endpoint_deleted'
  data: unknown
}

export type LiveEvent = CaptureEvent | EndpointEvent
export type LiveEventType = LiveEvent['type']

/** Bodies larger than this are left out of live events (clients GET …/body): bounded fan-out. */
export const LIVE_BODY_MAX = 64 * 1024

const channelOf = (platform: Platform, token: string) => `${platform.config.QUEUE_PREFIX}:wh-live:${token}`

/** A capture as a live event: the API's shape, with bodies over LIVE_BODY_MAX omitted. */
export function liveCapture(doc: CaptureDoc, bytes?: Buffer) {
  const b = bytes ?? (doc.body ? inlineBytes(doc.body) : undefined)
  return presentCapture({ ...doc, body: undefined }, b && b.length <= LIVE_BODY_MAX ? b : undefined)
}

/**
 * Events of one channel published while a publish of it is in flight go out together as one
 * pipeline (one socket write, in order): a busy endpoint's captures do not each pay a Redis round
 * trip (group-line.ts).
 */
const publishers = new WeakMap<Platform, (channel: string, message: string) => Promise<void>>()

function publisher(platform: Platform) {
  let line = publishers.get(platform)
  if (!line) {
    line = groupLine<string, void>(async (channel, messages) => {
      if (messages.length === 1) {
        await platform.redis.publish(channel, messages[0]!)
        return [undefined]
      }
      const pipe = platform.redis.pipeline()
      for (const m of messages) pipe.publish(channel, m)
      const results = (await pipe.exec()) ?? []
      const failed = results.find(([err]) => err)
      if (failed) throw failed[0]
      return messages.map(() => undefined)
    })
    publishers.set(platform, line)
  }
  return line
}

/** Publish an event; a Redis outage loses only the wake-up (streams resume from MongoDB), never the capture. */
export async function publishLive(platform: Platform, token: string, ev: LiveEvent): Promise<void> {
  try {
    await publisher(platform)(channelOf(platform, token), JSON.stringify(ev))
  } catch (err) {
    logger.warn({ err: String(err), token }, 'live event not published')
  }
}

type Listener = (ev: LiveEvent) => void

/** One Redis subscriber per API process, shared by every stream open on it. */
export class LiveHub {
  private readonly sub: RedisClient
  private readonly listeners = new Map<string, Set<Listener>>()
  private readonly subscribing = new Map<string, Promise<unknown>>()

  constructor(private readonly platform: Platform) {
    // ioredis re-subscribes every channel by itself after a reconnect.
    this.sub = createRedis(platform.redisUrl, 'blocking', { connectionName: 'webhooks-live' })
    this.sub.on('message', (channel: string, raw: string) => {
      const set = this.listeners.get(channel)
      if (!set) return
      let ev: LiveEvent
      try {
        ev = JSON.parse(raw) as LiveEvent
      } catch {
        return
      }
      for (const l of set) l(ev)
    })
  }

  /** Resolves once Redis confirmed the subscription, so nothing published afterwards is missed. */
  async subscribe(token: string, listener: Listener): Promise<() => void> {
    const channel = channelOf(this.platform, token)
    let set = this.listeners.get(channel)
    if (!set) this.listeners.set(channel, (set = new Set()))
    set.add(listener)
    let pending = this.subscribing.get(channel)
    if (!pending) this.subscribing.set(channel, (pending = this.sub.subscribe(channel)))
    await pending
    return () => {
      const s = this.listeners.get(channel)
      if (!s?.delete(listener) || s.size) return
      this.listeners.delete(channel)
      this.subscribing.delete(channel)
      this.sub.unsubscribe(channel).catch(() => undefined)
    }
  }

  /** Open streams on this process (metrics, benchmarks). */
  get streams(): number {
    let n = 0
    for (const s of this.listeners.values()) n += s.size
    return n
  }

  close(): void {
    this.listeners.clear()
    this.subscribing.clear()
    this.sub.disconnect()
  }
}
