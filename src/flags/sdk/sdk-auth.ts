// Admission of evaluation requests: the SDK key (never the API key) names one project; each key
// gets its plan's evaluations per second (docs/billing.md, "Plans and limits"), counted in Redis
// across all replicas.
// The counter is leased (createLeasedLimiter): a replica takes blocks of max(1, limit/20) points
// from Redis and spends them in memory, so most requests make no Redis call at all (one round trip
// per request was the largest cost of an evaluation). The counters use their own connection.
import type { Context } from 'koa'
import { FLAGS_LIMITS, PLANS, type Plan } from '../../platform/plans.ts'
import { bearerToken } from '../../platform/http/auth.ts'
import { HttpError } from '../../platform/http/errors.ts'
import { createLeasedLimiter, type LeasedLimiter } from '../../platform/http/rate-limit.ts'
import type { Platform } from '../../platform/platform.ts'
import { createRedis } from '../../platform/redis/redis.ts'
import type { FlagCache, SdkKeyEntry } from './flag-cache.ts'

export const SDK_UNAUTHORIZED = 'Unauthorized: invalid or missing SDK key'

/** The SDK key of a request as OpenFeature clients send it: `Authorization: Bearer`, or `X-API-Key`. */
export function sdkKeyOf(ctx: Context): string | undefined {
  return bearerToken(ctx) ?? (ctx.get('x-api-key') || undefined)
}

export type Admit = (sdkKey: unknown, headers?: Record<string, string>) => Promise<SdkKeyEntry>

export interface EvaluationGate {
  admit: Admit
  /**
   * The common case decided without waiting: a key this replica knows with a leased point left.
   * Returns its entry with the point taken, or undefined having taken nothing (then call admit).
   */
  admitNow(sdkKey: unknown): SdkKeyEntry | undefined
  close(): void
}

export function evaluationGate(platform: Platform, cache: FlagCache): EvaluationGate {
  const redis = createRedis(platform.redisUrl, 'producer', { connectionName: 'flags-rate-limit' })
  const limiters = {} as Record<Plan, LeasedLimiter>
  for (const plan of PLANS) {
    const n = FLAGS_LIMITS[plan].evaluations_per_second
    limiters[plan] = createLeasedLimiter(redis, {
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
  const admitNow = (sdkKey: unknown): SdkKeyEntry | undefined => {
    const entry = typeof sdkKey === 'string' ? cache.knownKey(sdkKey) : undefined
    return entry && limiters[entry.plan].tryTake(entry.keyHash) ? entry : undefined
  }
  return { admit, admitNow, close: () => redis.disconnect() }
}
