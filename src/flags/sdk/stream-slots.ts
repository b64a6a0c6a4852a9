// Open change streams per account, counted across all API replicas. Each stream holds a leased
// slot in a Redis sorted set (member: the stream, score: when its lease ends, on Redis's clock);
// the replica renews its streams' leases well before they end, so a replica that crashes stops
// renewing and its slots fall free within one lease instead of leaking for good.
import type { Redis } from 'ioredis'
import { randomBytes } from 'node:crypto'
import type { Plan } from '../../platform/plans.ts'
import { HttpError, tooMany, unavailable } from '../../platform/http/errors.ts'
import { logger } from '../../platform/logger.ts'
import type { Platform } from '../../platform/platform.ts'

/** Open change streams per account (all its projects and environments, all replicas). */
export const STREAM_LIMITS: Record<Plan, number> = { free: 10, starter: 100, pro: 1_000, business: 10_000 }

export function streamLimit(plan: Plan): HttpError {
  const max = STREAM_LIMITS[plan]
  const e = tooMany(`Stream limit reached: the ${plan} plan allows ${max} open change streams per account`, 30)
  return new HttpError(429, e.message, e.headers, { limit: 'open_streams_per_account', max, plan })
}

// Redis's TIME keeps every replica on one clock. Expired leases are dropped before counting.
const NOW = `local t = redis.call('TIME') local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)`
const ACQUIRE = `${NOW}
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1`
// XX: a lease that already ran out (and may have been given to another stream) is not revived.
const RENEW = `${NOW}
for i = 2, #ARGV do redis.call('ZADD', KEYS[1], 'XX', now + tonumber(ARGV[1]), ARGV[i]) end
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return 1`

type SlotRedis = Redis & {
  flagsStreamAcquire(key: string, max: number, leaseMs: number, member: string): Promise<number>
  flagsStreamRenew(key: string, leaseMs: number, ...members: string[]): Promise<number>
}

export interface StreamSlotOptions {
  leaseMs?: number
}

export class StreamSlots {
  private readonly redis: SlotRedis
  private readonly prefix: string
  private readonly leaseMs: number
  private readonly replica = randomBytes(6).toString('base64url')
  private seq = 0
  /** The slots this replica holds, by account. */
  private readonly held = new Map<string, Set<string>>()
  private readonly timer: NodeJS.Timeout

  constructor(platform: Platform, opts: StreamSlotOptions = {}) {
    this.redis = platform.redis as unknown as SlotRedis
    this.prefix = `${platform.config.QUEUE_PREFIX}:flags:streams:`
    this.leaseMs = opts.leaseMs ?? 60_000
    if (typeof this.redis.flagsStreamAcquire !== 'function') {
      this.redis.defineCommand('flagsStreamAcquire', { numberOfKeys: 1, lua: ACQUIRE })
      this.redis.defineCommand('flagsStreamRenew', { numberOfKeys: 1, lua: RENEW })
    }
    this.timer = setInterval(() => void this.renew(), Math.max(100, Math.floor(this.leaseMs / 3)))
    this.timer.unref()
  }

  /** Takes a slot for one stream, or throws 429 naming the limit (503 when Redis cannot say). */
  async acquire(accountId: string, plan: Plan): Promise<() => void> {
    const member = `${this.replica}:${++this.seq}`
    let ok: number
    try {
      ok = await this.redis.flagsStreamAcquire(this.prefix + accountId, STREAM_LIMITS[plan], this.leaseMs, member)
    } catch (err) {
      logger.warn({ err: String(err) }, 'stream slot not taken')
      throw unavailable()
    }
    if (ok !== 1) throw streamLimit(plan)
    let set = this.held.get(accountId)
    if (!set) this.held.set(accountId, (set = new Set()))
    set.add(member)
    let released = false
    return () => {
      if (released) return
      released = true
      const s = this.held.get(accountId)
      s?.delete(member)
      if (s && s.size === 0) this.held.delete(accountId)
      this.redis.zrem(this.prefix + accountId, member).catch(() => undefined)
    }
  }

  /** Streams this replica holds (all accounts). */
  get open(): number {
    let n = 0
    for (const s of this.held.values()) n += s.size
    return n
  }

  private async renew(): Promise<void> {
    for (const [accountId, members] of this.held) {
      const list = [...members]
      for (let i = 0; i < list.length; i += 1_000) {
        await this.redis
          .flagsStreamRenew(this.prefix + accountId, this.leaseMs, ...list.slice(i, i + 1_000))
          .catch((err) => logger.warn({ err: String(err) }, 'stream slots not renewed'))
      }
    }
  }

  close(): void {
    clearInterval(this.timer)
  }
}
