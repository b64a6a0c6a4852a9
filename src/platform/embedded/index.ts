// Starts what the environment does not provide: Redis and MongoDB when their URLs are unset.
import type { Config } from '../config.ts'
import { logger } from '../logger.ts'
import { startMongoEngine } from './mongo-engine.ts'
import { startRedisServer } from './redis-server.ts'
import type { StartedChild } from './child.ts'

export interface Infra {
  redisUrl: string
  mongoUrl: string
  embedded: { redis: boolean; mongo: boolean }
  stop(): Promise<void>
}

export async function ensureInfra(config: Config): Promise<Infra> {
  const started: StartedChild[] = []
  const [redisUrl, mongoUrl] = await Promise.all([
    config.REDIS_URL ??
      startRedisServer().then((r) => {
        started.push(r.child)
        logger.info({ url: r.url }, 'started embedded redis-server')
        return r.url
      }),
    config.MONGO_URL ??
      startMongoEngine().then((m) => {
        started.push(m.child)
        logger.info({ url: m.url }, 'started embedded MongoDB-compatible engine (data is not kept)')
        return m.url
      }),
  ])
  return {
    redisUrl,
    mongoUrl,
    embedded: { redis: !config.REDIS_URL, mongo: !config.MONGO_URL },
    async stop() {
      await Promise.all(started.map((c) => c.stop()))
    },
  }
}
