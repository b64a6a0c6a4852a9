// A worker process's own small HTTP server (WORKER_PORT): /healthz, /readyz and /metrics, so
// orchestrators can probe workers and Prometheus can scrape job metrics where the jobs run.
import type { Server } from 'node:http'
import { createApp } from '../http/app.ts'
import type { JobDefinition } from '../queue/job.ts'
import type { Platform } from '../platform.ts'
import { mountOps } from './routes.ts'

export async function startWorkerHttp(platform: Platform, jobs: JobDefinition[], port: number): Promise<Server> {
  const app = mountOps(createApp({ service: 'worker' }), platform, { service: 'worker', jobs })
  const server = app.listen(port, platform.config.HOST)
  await new Promise<void>((res, rej) => server.once('listening', res).once('error', rej))
  return server
}
