// The URLs a role that starts no embedded services must be given.
import type { Config } from './platform/config.ts'

export function requireUrls(config: Config, role: string): { redisUrl: string; mongoUrl: string } {
  if (!config.REDIS_URL || !config.MONGO_URL) {
    throw new Error(`the ${role} role needs REDIS_URL and MONGO_URL (use "start" for embedded defaults)`)
  }
  return { redisUrl: config.REDIS_URL, mongoUrl: config.MONGO_URL }
}

