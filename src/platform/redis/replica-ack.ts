// Whether a replica already has what this process just wrote to a queue (Redis WAIT), for work
// that must survive a failover: Redis replicates asynchronously, and a job written to a master
// that dies or is demoted before its replica copied it is lost with it. Callers keep their own
// record (the outbox, a batch's "not enqueued yet") until this says yes.
//
//  - one server: nothing to wait for (no failover; its AOF is its durability), always yes;
//  - Sentinel: WAIT on the one connection to the master;
//  - cluster: WAIT on the connection to the master of the queue's slot (WAIT counts the writes
//    of the connection it is sent on, and ioredis keeps one per node), sent in a pipeline with a
//    read of a key in the queue's hash tag, which is how ioredis routes a keyless command. A shard
//    whose master has no replica (its ROLE, re-read every 5 s) is not waited for: there is nothing
//    to wait for, and a master that dies without one takes its slots down until it comes back
//    with its own data.
import calculateSlot from 'cluster-key-slot'
import type { Cluster } from 'ioredis'
import { isCluster } from './redis.ts'
import type { Platform } from '../platform.ts'
import { parseRedisTarget } from './redis-target.ts'

/** How long a durable write waits for a replica's acknowledgement. */
export const REPLICA_ACK_MS = 250

const kinds = new WeakMap<Platform, 'standalone' | 'cluster' | 'sentinel'>()

export async function replicaHas(platform: Platform, queue: string): Promise<boolean> {
  let kind = kinds.get(platform)
  if (kind === undefined) kinds.set(platform, (kind = parseRedisTarget(platform.redisUrl).kind))
  if (kind === 'standalone') return true
  const redis = platform.redis
  if (!isCluster(redis)) return (await redis.wait(1, REPLICA_ACK_MS)) >= 1
  const key = `${platform.queues.prefixOf(queue)}:${queue}:meta`
  if ((await replicasOfMaster(redis, key)) === 0) return true
  const results = await redis.pipeline().exists(key).wait(1, REPLICA_ACK_MS).exec()
  const [err, acked] = results?.[1] ?? [new Error('no reply to WAIT'), 0]
  if (err) throw err
  return Number(acked) >= 1
}

/**
 * How many replicas the master serving `key`'s slot has, as the master itself says (ROLE), kept
 * for a few seconds per master. Not ioredis's slot map: it lists the replicas it saw at its last
 * refresh, and a replica that joined since would be missing — its shard then looked replica-less
 * and a job left the outbox before any replica had it (found by the cluster failover test).
 */
const ROLE_TTL_MS = 5_000
const roleCache = new WeakMap<object, Map<string, { replicas: number; at: number }>>()

async function replicasOfMaster(redis: Cluster, key: string): Promise<number> {
  const master = redis.slots[calculateSlot(key)]?.[0] ?? '?'
  let perNode = roleCache.get(redis)
  if (!perNode) roleCache.set(redis, (perNode = new Map()))
  const known = perNode.get(master)
  if (known && Date.now() - known.at < ROLE_TTL_MS) return known.replicas
  const results = await redis.pipeline().exists(key).role().exec()
  const [err, role] = results?.[1] ?? [new Error('no reply to ROLE'), null]
  if (err) throw err
  // ['master', offset, [[host, port, offset], …]]; anything else (a replica answering during a
  // failover) is treated as "has replicas", so the caller waits for an acknowledgement.
  const replicas = Array.isArray(role) && role[0] === 'master' && Array.isArray(role[2]) ? role[2].length : 1
  perNode.set(master, { replicas, at: Date.now() })
  return replicas
}
