// Starts what the environment does not provide: Redis and MongoDB when their URLs are unset.
import type { Config } from '../config.ts'
import { logger } from '../logger.ts'
import { startMongoEngine } from './mongo-engine.ts'
import { startRedisServer } from './redis-server.ts'
import type { StartedChild } from './child.ts'
import { startStripeSimulator } from '../billing/simulator/server.ts'
import { WEBHOOK_PATH } from '../billing/stripe-webhook.ts'

export interface Infra {
  redisUrl: string
  mongoUrl: string
  embedded: { redis: boolean; mongo: boolean }
  /** Address of the embedded Stripe simulator, when one was started. */
  stripe?: string
  /** Variables that point this process's children at what was started here (STRIPE_*). */
  env: Record<string, string>
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
  // Without Stripe keys, local runs get the simulator (never in production: it upgrades for free).
  const sim =
    !config.STRIPE_SECRET_KEY && config.NODE_ENV !== 'production'
      ? await startStripeSimulator({ webhookUrls: webhookUrls(config), secretKey: config.STRIPE_SIMULATOR_KEY, port: config.STRIPE_SIMULATOR_PORT })
      : null
  if (sim) logger.info({ url: sim.url }, 'started embedded Stripe simulator (no real payments)')
  return {
    redisUrl,
    mongoUrl,
    embedded: { redis: !config.REDIS_URL, mongo: !config.MONGO_URL },
    stripe: sim?.url,
    env: sim ? { STRIPE_API_BASE: sim.url, STRIPE_SECRET_KEY: sim.secretKey, STRIPE_WEBHOOK_SECRET: sim.webhookSecret } : {},
    async stop() {
      await sim?.close()
      await Promise.all(started.map((c) => c.stop()))
    },
  }
}

/** Every service's Stripe webhook on this host (Stripe sends each event to every endpoint). */
function webhookUrls(config: Config): string[] {
  const host = config.HOST === '0.0.0.0' || config.HOST === '::' ? '127.0.0.1' : config.HOST
  return [config.INVOICE_PORT, config.FLAGS_PORT, config.WEBHOOKS_PORT].map((p) => `http://${host}:${p}${WEBHOOK_PATH}`)
}
