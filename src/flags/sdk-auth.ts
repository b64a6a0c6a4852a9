// Admission of evaluation requests: the SDK key (never the API key) names one project; each key
// gets its plan's evaluations per second (DESIGN.md §6), counted in Redis across all replicas.
// The counters use their own connection with auto-pipelining: under load, the increments of many
// concurrent requests go to Redis in one write instead of one system call each (the largest cost
// of an evaluation request otherwise).
import { FLAGS_LIMITS, PLANS, type Plan } from '../platform/billing/plans.ts'
import { HttpError } from '../platform/http/errors.ts'
import { createLimiter, type Limiter } from '../platform/http/rate-limit.ts'
import type { Platform } from '../platform/platform.ts'
import { createRedis } from '../platform/redis.ts'
import type { FlagCache, SdkKeyEntry } from './flag-cache.ts'

export const SDK_UNAUTHORIZED = 'Unauthorized: invalid or missing SDK key'

export type Admit = (sdkKey: unknown, headers?: Record<string, string>) => Promise<SdkKeyEntry>

export function evaluationGate(platform: Platform, cache: FlagCache): { admit: Admit; close(): void } {
  const redis = createRedis(platform.redisUrl, 'producer', { enableAutoPipelining: true, connectionName: 'flags-rate-limit' })
  const limiters = {} as Record<Plan, Limiter>
  for (const plan of PLANS) {
    const n = FLAGS_LIMITS[plan].evaluations_per_second
    limiters[plan] = createLimiter(redis, {
      name: `flags-eval-${plan}`,
      points: n,
      durationSec: 1,
      message: `Rate limit exceeded: the ${plan} plan allows ${n} evaluation requests per second per SDK key`,
      namespace: platform.config.QUEUE_PREFIX,
    })
  }
  const admit: Admit = async (sdkKey, headers = {}) => {
    const entry = typeof sdkKey === 'string' ? await cache.resolveKey(sdkKey) : null
    if (!entry) throw new HttpError(401, SDK_UNAUTHORIZED, headers)
    await limiters[entry.plan].take(entry.keyHash)
    return entry
  }
  return { admit, close: () => redis.disconnect() }
}
