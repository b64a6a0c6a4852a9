// What a service is to the platform: a Koa app on its own port and the queues whose job results its
// requests wait for. src/services.ts lists the services; their MongoDB indexes are in
// src/collections.ts, which a worker loads without the apps.
import type Koa from 'koa'
import type { Service } from './plans.ts'
import type { Config } from './config.ts'
import type { Platform } from './platform.ts'

/** One app instance and what it holds beyond the request cycle (caches, subscribers, timers). */
export interface ServiceApp {
  app: Koa
  /** Release what the app holds; called when the HTTP server serving it closes. */
  close(): Promise<void>
}

export interface ServiceDef {
  name: Service
  port(config: Config): number
  /** Path prefix of the service's API as documented (the invoice base URL includes /api/v1). */
  basePath: string
  createApp(platform: Platform): ServiceApp
  /** Queues whose job results this service's requests wait for (woken through the process's wake channel: queues.ts). */
  awaits: string[]
}

/** A ServiceApp for an app that holds nothing beyond its requests. */
export const statelessApp = (app: Koa): ServiceApp => ({ app, close: async () => undefined })
