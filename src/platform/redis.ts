// Redis connections. Workers and blocking readers retry forever; request-path producers fail fast
// so that a Redis outage becomes a 503 instead of a hung request.
import { Redis, type RedisOptions } from 'ioredis'

export type RedisRole = 'producer' | 'blocking'

export function createRedis(url: string, role: RedisRole, extra: RedisOptions = {}): Redis {
  const base: RedisOptions =
    role === 'blocking'
      ? { maxRetriesPerRequest: null, enableReadyCheck: false }
      : { maxRetriesPerRequest: 1, enableOfflineQueue: false, connectTimeout: 2_000, commandTimeout: 5_000 }
  return new Redis(url, {
    ...base,
    retryStrategy: (times) => Math.min(times * 200, 2_000),
    lazyConnect: false,
    ...extra,
  })
}

/** Resolve once the connection is ready (or reject after timeoutMs). */
export function redisReady(r: Redis, timeoutMs = 10_000): Promise<void> {
  if (r.status === 'ready') return Promise.resolve()
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => {
      cleanup()
      reject(new Error('Redis not ready'))
    }, timeoutMs)
    const onReady = () => {
      cleanup()
      resolve()
    }
    const cleanup = () => {
      clearTimeout(t)
      r.off('ready', onReady)
    }
    r.on('ready', onReady)
  })
}
