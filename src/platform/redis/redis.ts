// Every Redis connection of the process is built here, from REDIS_URL (one server, a cluster or a
// Sentinel set: redis-target.ts). Workers and blocking readers retry forever; request-path
// producers fail fast so that a Redis outage becomes a 503 instead of a hung request.
import { Cluster, Redis, type RedisOptions } from 'ioredis'
import { parseRedisTarget, type RedisTarget } from './redis-target.ts'
import { watchRedisErrors } from './redis-errors.ts'

/** A connection to whatever REDIS_URL names: ioredis Redis (one server, Sentinel) or Cluster. */
export type RedisClient = Redis | Cluster

export type RedisRole = 'producer' | 'blocking'

/**
 * Errors after which the connection must be rebuilt, not retried on the same socket: a master
 * demoted by a failover answers READONLY for good (and a Sentinel connection reconnecting asks the
 * sentinels for the new master); a server loading its data answers LOADING. 2 = reconnect and
 * resend the command.
 */
const RECONNECT_ON = /^(READONLY|LOADING|MASTERDOWN)\b/

export function reconnectOnError(err: Error): 2 | false {
  return RECONNECT_ON.test(err.message) ? 2 : false
}

const retryStrategy = (times: number) => Math.min(times * 200, 2_000)

function roleOptions(role: RedisRole): RedisOptions {
  return role === 'blocking'
    ? { maxRetriesPerRequest: null, enableReadyCheck: false }
    : { maxRetriesPerRequest: 1, enableOfflineQueue: false, connectTimeout: 2_000, commandTimeout: 5_000 }
}

export function createRedis(url: string, role: RedisRole, extra: RedisOptions = {}): RedisClient {
  const client = connect(parseRedisTarget(url), role, extra)
  // Every client has an error listener from birth: an outage is logged once, never printed by
  // ioredis as an unhandled error event (BullMQ never listens to the client a Worker copies).
  watchRedisErrors(client, { redis: extra.connectionName ?? role })
  return client
}

function connect(target: RedisTarget, role: RedisRole, extra: RedisOptions): RedisClient {
  const base: RedisOptions = { ...roleOptions(role), retryStrategy, reconnectOnError, lazyConnect: false, ...extra }
  switch (target.kind) {
    case 'standalone':
      return new Redis(target.url, base)
    case 'sentinel':
      return new Redis({
        ...base,
        sentinels: target.sentinels,
        name: target.name,
        role: 'master',
        db: target.db,
        username: target.username,
        password: target.password,
        sentinelUsername: target.username,
        sentinelPassword: target.password,
        ...(target.tls ? { tls: {}, enableTLSForSentinelMode: true } : {}),
        // Subscribe to the sentinels' +switch-master and reconnect at once, instead of waiting
        // for the old master to drop us or answer READONLY.
        failoverDetector: true,
        sentinelRetryStrategy: retryStrategy,
      })
    case 'cluster': {
      const { retryStrategy: _r, enableOfflineQueue, lazyConnect, ...redisOptions } = base
      return new Cluster(target.nodes, {
        clusterRetryStrategy: retryStrategy,
        enableOfflineQueue: enableOfflineQueue ?? true,
        enableReadyCheck: true,
        lazyConnect,
        // A failover moves slots: retry MOVED/TRYAGAIN/CLUSTERDOWN briefly rather than fail.
        retryDelayOnFailover: 200,
        retryDelayOnClusterDown: 300,
        retryDelayOnTryAgain: 200,
        slotsRefreshTimeout: 2_000,
        slotsRefreshInterval: 5_000,
        redisOptions: {
          ...redisOptions,
          username: target.username,
          password: target.password,
          ...(target.tls ? { tls: {} } : {}),
        },
      })
    }
  }
}

export function isCluster(r: RedisClient): r is Cluster {
  return (r as Cluster).isCluster === true
}

/** Resolve once the connection is ready (or reject after timeoutMs). */
export function redisReady(r: RedisClient, timeoutMs = 10_000): Promise<void> {
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
