// An API service on its HTTP port: the service's app with the operations routes, connection
// tracking and JSON answers to malformed requests. Used by the start and api roles and the tests.
import type { Server } from 'node:http'
import type { ServiceDef } from './platform/service.ts'
import type { Platform } from './platform/platform.ts'
import { JOBS } from '../jobs/index.ts'
import { trackConnections } from './platform/ops/lifecycle.ts'
import { mountOps } from './platform/ops/routes.ts'
import { answerClientErrorsAsJson } from './platform/http/client-error.ts'

export async function listen(platform: Platform, svc: ServiceDef, port: number): Promise<Server> {
  for (const q of svc.awaits) {
    await platform.queues.listen(q)
    platform.consumers.watch(q)
  }
  const { app, close } = svc.createApp(platform)
  mountOps(app, platform, { service: svc.name, jobs: JOBS, api: { basePath: svc.basePath }, awaits: svc.awaits })
  const server = app.listen(port, platform.config.HOST)
  trackConnections(server)
  answerClientErrorsAsJson(server)
  // What the app holds (caches, subscribers) lives as long as the server that serves it.
  server.once('close', () => void close())
  await new Promise<void>((res, rej) => server.once('listening', res).once('error', rej))
  // Keep-alive longer than typical load balancers' idle timeout.
  server.keepAliveTimeout = 65_000
  return server
}

