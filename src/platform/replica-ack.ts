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
//    whose master has no replica is not waited for: there is nothing to wait for, and a master
//    that dies without one takes its slots down until it comes back with its own data.
import calculateSlot from 'cluster-key-slot'
import { isCluster } from './redis.ts'
import type { Platform } from './platform.ts'
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
  const servedBy = redis.slots[calculateSlot(key)]
  if (servedBy && servedBy.length < 2) return true
  const results = await redis.pipeline().exists(key).wait(1, REPLICA_ACK_MS).exec()
  const [err, acked] = results?.[1] ?? [new Error('no reply to WAIT'), 0]
  if (err) throw err
  return Number(acked) >= 1
}
