// Rate limits shared by every API replica: counters live in Redis (rate-limiter-flexible).
import type { RedisClient as Redis } from '../redis/redis.ts'
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible'
import { tooMany, unavailable } from './errors.ts'

export interface Limiter {
  /** Take one point for `key`; throws 429 (with Retry-After) past the limit, 503 if Redis is down. */
  take(key: string): Promise<void>
}

/** A limiter that can often decide without waiting: hot paths try that first and skip a promise. */
export interface LeasedLimiter extends Limiter {
  /** Take one point from this replica's lease if one is left; false means "call take()" (nothing was taken). */
  tryTake(key: string): boolean
}

/** Redis key prefix of a limiter: deployment namespace (if any), then the limiter's name. */
function keyPrefix(opts: Pick<LimiterOptions, 'name' | 'namespace'>): string {
  return `${opts.namespace ? `${opts.namespace}:` : ''}rl:${opts.name}`
}

export interface LimiterOptions {
  name: string
  points: number
  durationSec: number
  message: string
  /** Deployment namespace (pass config.QUEUE_PREFIX) so deployments or test files sharing one Redis keep separate budgets. */
  namespace?: string
}

export function createLimiter(redis: Redis, opts: LimiterOptions): Limiter {
  const rl = new RateLimiterRedis({
    storeClient: redis,
    keyPrefix: keyPrefix(opts),
    points: opts.points,
    duration: opts.durationSec,
  })
  return {
    async take(key: string) {
      try {
        await rl.consume(key, 1)
      } catch (err) {
        if (err instanceof RateLimiterRes) throw tooMany(opts.message, err.msBeforeNext / 1000)
        throw unavailable()
      }
    },
  }
}

/**
 * Leased rate limit: the same cross-replica guarantee as createLimiter (never more than `points`
 * admitted per window per key, over all replicas together) without a Redis round trip per request.
 * Each replica takes blocks of points ("leases", `lease` points, default max(1, points/20)) from one
 * Redis counter per key and window in one atomic script, and spends them locally. The window starts
 * at the first lease of a key (like createLimiter's) and ends when the Redis counter expires; a
 * replica stops spending its leased points no later than that (it times the window from before it
 * sent the lease request), and points left over are simply lost. A replica that gets no points
 * answers 429 until the window ends. The price: a replica may refuse while another still holds
 * unspent leased points, so a key whose traffic is spread over many replicas can see fewer than
 * `points` admitted in a window (at most replicas × lease fewer).
 */
export function createLeasedLimiter(
  redis: Redis,
  opts: LimiterOptions & {
    /** Points per lease (default max(1, floor(points / 20))). */
    lease?: number
    /** Keys kept locally before expired ones are swept. */
    maxKeys?: number
  },
): LeasedLimiter {
  const prefix = `${keyPrefix(opts)}:lease:`
  const lease = Math.max(1, Math.min(opts.points, opts.lease ?? Math.floor(opts.points / 20)))
  const windowMs = opts.durationSec * 1000
  const maxKeys = opts.maxKeys ?? 10_000
  const states = new Map<string, LeaseState>()

  const fail = (s: LeaseState) => tooMany(opts.message, (s.endsAt - performance.now()) / 1000)

  async function acquire(key: string, s: LeaseState): Promise<void> {
    const sent = performance.now()
    let granted: number
    let ttl: number
    try {
      ;[granted, ttl] = (await (redis as unknown as LeaseRedis).leasePoints(prefix + key, opts.points, lease, windowMs)) as [number, number]
    } catch {
      throw unavailable()
    }
    if (s.endsAt <= sent) {
      // A fresh window (first lease, or the previous one ran out while idle).
      s.remaining = 0
      s.exhausted = false
    }
    s.endsAt = sent + (ttl > 0 ? ttl : windowMs)
    if (granted > 0) s.remaining += granted
    else s.exhausted = true
  }

  function sweep() {
    const now = performance.now()
    for (const [k, s] of states) if (s.endsAt <= now && !s.pending) states.delete(k)
  }

  async function slow(key: string): Promise<void> {
    for (;;) {
      const s = stateOf(key)
      if (s.remaining > 0) {
        s.remaining--
        return
      }
      if (s.exhausted) throw fail(s)
      if (!s.pending) {
        if (states.size > maxKeys) sweep()
        s.pending = acquire(key, s).finally(() => {
          s.pending = null
        })
      }
      await s.pending
    }
  }

  function stateOf(key: string): LeaseState {
    let s = states.get(key)
    if (!s) {
      s = { remaining: 0, endsAt: 0, exhausted: false, pending: null }
      states.set(key, s)
    } else if (s.endsAt <= performance.now() && !s.pending) {
      // The window is over: unspent points and the refusal end with it.
      s.remaining = 0
      s.exhausted = false
    }
    return s
  }

  function tryTake(key: string): boolean {
    const s = stateOf(key)
    if (s.remaining > 0) {
      s.remaining--
      return true
    }
    return false
  }

  defineLeaseScript(redis)
  return {
    tryTake,
    take(key: string) {
      // The hot path: a local decrement, no promise of our own.
      if (tryTake(key)) return RESOLVED
      const s = stateOf(key)
      if (s.exhausted) return Promise.reject(fail(s))
      return slow(key)
    },
  }
}

interface LeaseState {
  remaining: number
  /** performance.now() by which this replica stops using the window's points. */
  endsAt: number
  exhausted: boolean
  pending: Promise<void> | null
}

const RESOLVED = Promise.resolve()

type LeaseRedis = Redis & { leasePoints(key: string, limit: number, lease: number, windowMs: number): Promise<unknown> }

/** Grants min(lease, limit - used) points of the key's window; starts the window (its TTL) on first use. Returns {granted, pttl}. */
const LEASE_SCRIPT = `
local used = tonumber(redis.call('GET', KEYS[1]) or '-1')
if used < 0 then
  redis.call('SET', KEYS[1], 0, 'PX', ARGV[3])
  used = 0
end
local grant = math.min(tonumber(ARGV[2]), tonumber(ARGV[1]) - used)
if grant > 0 then redis.call('INCRBY', KEYS[1], grant) else grant = 0 end
return {grant, redis.call('PTTL', KEYS[1])}
`

function defineLeaseScript(redis: Redis) {
  if (typeof (redis as unknown as Partial<LeaseRedis>).leasePoints === 'function') return
  redis.defineCommand('leasePoints', { numberOfKeys: 1, lua: LEASE_SCRIPT })
}
