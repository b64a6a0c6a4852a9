// An API service on its HTTP port: the service's app with the operations routes, connection
// tracking and JSON answers to malformed requests. Used by the start and api roles and the tests.
import { createServer, type Server } from 'node:http'
import type { ServiceDef } from './platform/service.ts'
import type { Platform } from './platform/platform.ts'
import { JOBS } from '../jobs/index.ts'
import { trackConnections } from './platform/ops/lifecycle.ts'
import { mountOps } from './platform/ops/routes.ts'
import { answerClientErrorsAsJson } from './platform/http/client-error.ts'
import { requestListener } from './platform/http/before-koa.ts'
import { logger } from './platform/logger.ts'

const appClosing = new WeakMap<Server, Promise<void>>()

/** How long a stop waits for an app's close (a store already gone must not hold the stop). */
export const APP_CLOSE_WAIT_MS = 5_000

/**
 * Resolves once the app of a closed server has released what it holds (its final writes done), or
 * after APP_CLOSE_WAIT_MS. Before the platform closes: otherwise those writes meet a closed store.
 */
export function appClosed(server: Server): Promise<void> {
  const closing = appClosing.get(server)
  if (!closing) return Promise.resolve()
  let timer: NodeJS.Timeout | undefined
  const bound = new Promise<void>((res) => (timer = setTimeout(res, APP_CLOSE_WAIT_MS)))
  return Promise.race([closing, bound]).finally(() => clearTimeout(timer))
}

export async function listen(platform: Platform, svc: ServiceDef, port: number): Promise<Server> {
  if (svc.awaits.length) await platform.queues.listenForWakes()
  for (const q of svc.awaits) platform.consumers.watch(q)
  const { app, close } = svc.createApp(platform)
  mountOps(app, platform, { service: svc.name, jobs: JOBS, api: { basePath: svc.basePath }, awaits: svc.awaits })
  // As app.listen, with the app's hot routes answered before Koa (platform/http/before-koa.ts).
  const server = createServer(requestListener(app)).listen(port, platform.config.HOST)
  trackConnections(server)
  answerClientErrorsAsJson(server)
  // What the app holds (caches, subscribers) lives as long as the server that serves it; its last
  // writes (usage counts, quota hold confirmations) are awaited before the stores close (appClosed).
  server.once('close', () => appClosing.set(server, close().catch((err) => logger.warn({ err: String(err), service: svc.name }, 'service app did not close cleanly'))))
  await new Promise<void>((res, rej) => server.once('listening', res).once('error', rej))
  // Keep-alive longer than typical load balancers' idle timeout.
  server.keepAliveTimeout = 65_000
  return server
}

