// Which queues have a live worker right now, across every process and replica: each worker
// process writes a heartbeat per queue it consumes into Redis (one hash per queue, a field per
// process holding "expiry,concurrency,average job ms"), and API processes read them in the
// background so that a request waiting on a queue nobody consumes is refused at once (503) instead
// of timing out (docs/operations.md, "Worker presence and admission").
// Expiry is computed with Redis's own clock (TIME inside the script), so hosts' clocks never
// matter. A worker that stops cleanly removes its field at once; one that dies stops beating and
// its field counts no more after HEARTBEAT_TTL_MS.
import { randomId } from '../ids.ts'
import { logger } from '../logger.ts'
import type { QueueRegistry } from './queues.ts'
import type { RedisClient } from '../redis/redis.ts'

/** What reading and beating need of the platform (not the platform itself, which holds a ConsumerWatch). */
export interface ConsumerStores {
  redis: RedisClient
  queues: QueueRegistry
}

/** How often a worker process beats, and how long a beat counts (a few missed beats survive a busy machine). */
export const HEARTBEAT_MS = 2_000
export const HEARTBEAT_TTL_MS = 10_000
/** How often an API process re-reads the heartbeats of the queues its requests wait on. */
export const CONSUMERS_REFRESH_MS = 1_000

const BEAT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('HSET', KEYS[1], ARGV[1], (now + tonumber(ARGV[2])) .. ',' .. ARGV[3] .. ',' .. ARGV[4])
local all = redis.call('HGETALL', KEYS[1])
for i = 1, #all, 2 do
  local exp = tonumber(string.match(all[i + 1], '^(%d+)'))
  if exp == nil or exp < now then redis.call('HDEL', KEYS[1], all[i]) end
end
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]) * 3)
return 1`

const READ = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local all = redis.call('HGETALL', KEYS[1])
local live = {}
for i = 1, #all, 2 do
  local exp = tonumber(string.match(all[i + 1], '^(%d+)'))
  if exp ~= nil and exp >= now then table.insert(live, all[i + 1]) end
end
return live`

/** The heartbeat hash of a queue (in the queue's own hash slot on a cluster). */
export const consumersKey = (queues: QueueRegistry, queue: string): string => `${queues.prefixOf(queue)}:${queue}:consumers`

export interface QueueConsumers {
  /** Worker processes consuming the queue. */
  workers: number
  /** Jobs they run at once, all together. */
  concurrency: number
  /** Their recent average time per job (ms); 0 until one has run a job. */
  avgJobMs: number
}

const NONE: QueueConsumers = { workers: 0, concurrency: 0, avgJobMs: 0 }

/** One fresh read of a queue's live consumers from Redis. */
export async function readConsumers(platform: ConsumerStores, queue: string): Promise<QueueConsumers> {
  const live = (await platform.redis.eval(READ, 1, consumersKey(platform.queues, queue))) as string[]
  let concurrency = 0
  let weighted = 0
  let measured = 0
  for (const v of live) {
    const [, c, ms] = v.split(',').map(Number)
    concurrency += c ?? 0
    if (ms && ms > 0) {
      weighted += ms * (c ?? 1)
      measured += c ?? 1
    }
  }
  return { workers: live.length, concurrency, avgJobMs: measured ? weighted / measured : 0 }
}

export interface Heartbeat {
  /** Record one finished job's duration (feeds the average the beat carries). */
  jobDone(queue: string, ms: number): void
  /** Stop beating and remove this process's fields: new requests no longer count on it. */
  stop(): Promise<void>
}

/** Beat for these queues (with the concurrency this process runs each at) until stopped. */
export function startHeartbeat(platform: ConsumerStores, queues: { queue: string; concurrency: number }[]): Heartbeat {
  const id = `${process.pid}:${randomId().slice(0, 8)}`
  const avg = new Map<string, number>()
  const redis: RedisClient = platform.redis
  let stopped = false
  const beat = async (): Promise<void> => {
    await Promise.all(
      queues.map((q) =>
        redis.eval(BEAT, 1, consumersKey(platform.queues, q.queue), id, String(HEARTBEAT_TTL_MS), String(q.concurrency), String(Math.round(avg.get(q.queue) ?? 0))),
      ),
    ).catch((err) => logger.debug({ err: (err as Error).message }, 'worker heartbeat failed; next beat retries'))
  }
  const timer = setInterval(() => void beat(), HEARTBEAT_MS)
  timer.unref()
  // A Redis that came back (maybe empty, maybe a promoted replica) learns about us at once.
  const onReady = (): void => void (stopped || beat())
  redis.on('ready', onReady)
  void beat()
  return {
    jobDone(queue, ms) {
      const prev = avg.get(queue)
      // Recent jobs count most: a machine that got busy shows within a few jobs.
      avg.set(queue, prev === undefined ? ms : prev * 0.8 + ms * 0.2)
    },
    async stop() {
      stopped = true
      clearInterval(timer)
      redis.off('ready', onReady)
      await Promise.allSettled(queues.map((q) => redis.hdel(consumersKey(platform.queues, q.queue), id)))
    },
  }
}

/**
 * What an API process knows of the consumers of the queues its requests wait on: refreshed in the
 * background (one small script per queue per second), so a request reads it from memory.
 */
export class ConsumerWatch {
  private readonly known = new Map<string, QueueConsumers>()
  private readonly watched = new Set<string>()
  private timer: NodeJS.Timeout | null = null
  private refreshing: Promise<void> | null = null

  constructor(private readonly platform: () => ConsumerStores) {}

  watch(queue: string): void {
    this.watched.add(queue)
    this.timer ??= setInterval(() => void this.refresh(), CONSUMERS_REFRESH_MS)
    this.timer.unref()
  }

  /** The last known consumers of a watched queue (none until the first read). */
  cached(queue: string): QueueConsumers {
    return this.known.get(queue) ?? NONE
  }

  /** Read every watched queue now (one read in flight at a time; callers share it). */
  refresh(): Promise<void> {
    this.refreshing ??= Promise.all(
      [...this.watched].map(async (q) => {
        try {
          this.known.set(q, await readConsumers(this.platform(), q))
        } catch {
          // Redis unreachable: keep what we knew; the request itself will meet the outage.
        }
      }),
    ).then(
      () => undefined,
      () => undefined,
    ).finally(() => (this.refreshing = null))
    return this.refreshing
  }

  /** The consumers of a queue, re-read at once when none were known (a worker may just have started). */
  async current(queue: string): Promise<QueueConsumers> {
    this.watch(queue)
    if (this.cached(queue).workers === 0) await this.refresh()
    return this.cached(queue)
  }

  close(): void {
    if (this.timer) clearInterval(this.timer)
    this.timer = null
  }
}
