// Rate limits shared by every API replica: counters live in Redis (rate-limiter-flexible).
import type { Redis } from 'ioredis'
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible'
import { tooMany, unavailable } from './errors.ts'

export interface Limiter {
  /** Take one point for `key`; throws 429 (with Retry-After) past the limit, 503 if Redis is down. */
  take(key: string): Promise<void>
}

export function createLimiter(
  redis: Redis,
  opts: {
    name: string
    points: number
    durationSec: number
    message: string
    /** Deployment namespace (pass config.QUEUE_PREFIX) so deployments or test files sharing one Redis keep separate budgets. */
    namespace?: string
  },
): Limiter {
  const rl = new RateLimiterRedis({
    storeClient: redis,
    keyPrefix: `${opts.namespace ? `${opts.namespace}:` : ''}rl:${opts.name}`,
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
