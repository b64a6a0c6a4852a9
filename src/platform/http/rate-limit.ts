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
 * `points` admitted in a window (at most replicas × 1.25 × lease fewer).
 * The next lease is asked for when a quarter of the current one is left (leases of 4 points or
 * more), not when it is spent: the requests that would have waited for that round trip (1-2 % of
 * a busy key's, right at its p99: docs/benchmarks.md, "Feature flags: where the p99 comes from")
 * are served from what is left meanwhile.
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
  /** Points left when the next lease is asked for ahead of need (0, for leases under 4: only once spent). */
  const refillAt = Math.floor(lease / 4)
  const windowMs = opts.durationSec * 1000
  const maxKeys = opts.maxKeys ?? 10_000
  const states = new Map<string, LeaseState>()

  const fail = (s: LeaseState) => tooMany(opts.message, (s.endsAt - performance.now()) / 1000)

  async function acquire(key: string, s: LeaseState): Promise<void> {
    const sent = performance.now()
    let granted: number
    let ttl: number
    let fresh: number
    try {
      ;[granted, ttl, fresh] = (await (redis as unknown as LeaseRedis).leasePoints(prefix + key, opts.points, lease, windowMs)) as [number, number, number]
    } catch {
      throw unavailable()
    }
    if (s.endsAt <= sent || fresh === 1) {
      // A fresh window (first lease, the previous one ran out while idle, or a lease asked for
      // ahead of need started the next window): what is left of the last one is not spent in it.
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

  function request(key: string, s: LeaseState): Promise<void> {
    if (!s.pending) {
      if (states.size > maxKeys) sweep()
      const p = acquire(key, s).finally(() => {
        s.pending = null
      })
      p.catch(() => undefined) // a lease asked for ahead of need may have no waiter: its failure is the next caller's
      s.pending = p
    }
    return s.pending
  }

  /** Spend one held point; ask for the next lease once only a quarter of this one is left. */
  function spend(key: string, s: LeaseState): void {
    if (--s.remaining === refillAt && refillAt > 0 && !s.exhausted && !s.pending) void request(key, s)
  }

  async function slow(key: string): Promise<void> {
    for (;;) {
      const s = stateOf(key)
      if (s.remaining > 0) {
        spend(key, s)
        return
      }
      if (s.exhausted) throw fail(s)
      await request(key, s)
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
      spend(key, s)
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

/**
 * Grants min(lease, limit - used) points of the key's window; starts the window (its TTL) on first
 * use. Returns {granted, pttl, 1 when this call started the window}.
 */
const LEASE_SCRIPT = `
local used = tonumber(redis.call('GET', KEYS[1]) or '-1')
local fresh = 0
if used < 0 then
  redis.call('SET', KEYS[1], 0, 'PX', ARGV[3])
  used = 0
  fresh = 1
end
local grant = math.min(tonumber(ARGV[2]), tonumber(ARGV[1]) - used)
if grant > 0 then redis.call('INCRBY', KEYS[1], grant) else grant = 0 end
return {grant, redis.call('PTTL', KEYS[1]), fresh}
`

function defineLeaseScript(redis: Redis) {
  if (typeof (redis as unknown as Partial<LeaseRedis>).leasePoints === 'function') return
  redis.defineCommand('leasePoints', { numberOfKeys: 1, lua: LEASE_SCRIPT })
}
