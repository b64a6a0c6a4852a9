// The worker role: job processors only (docs/operations.md). Loads no service routes: a worker
// process needs the job processors, the store's indexes and the queues, and loading the three APIs
// cost every worker start ~1 s of CPU (docs/benchmarks.md, "Start to first invoice").
import type { Config } from './platform/config.ts'
import { ALL_INDEXES } from './collections.ts'
import { ALL_QUEUES } from './job-contracts.ts'
import { createPlatform } from './platform/platform.ts'
import { startWorkers } from '../workers/main.ts'
import { JOBS } from '../jobs/index.ts'
import { startDraining } from './platform/ops/lifecycle.ts'
import { closeServer, onShutdown, STOP_WITH_PARENT } from './shutdown.ts'
import { requireUrls } from './role-urls.ts'

/** A worker process that `start` spawned drains and exits when `start` is gone (even SIGKILLed). */
function stopWithParent(): void {
  if (process.env[STOP_WITH_PARENT] !== '1') return
  // Before the shutdown handler is in place, SIGTERM simply ends the process: nothing to drain yet.
  const stop = (): void => void process.kill(process.pid, 'SIGTERM')
  // The channel is gone already when the parent died while this process was loading its modules.
  if (!process.channel || !process.connected) return stop()
  process.channel.unref()
  process.once('disconnect', stop)
}

export async function cmdWorker(config: Config, queues: string[], concurrency?: number): Promise<void> {
  stopWithParent()
  const platform = await createPlatform({ config, ...requireUrls(config, 'worker'), indexes: ALL_INDEXES, queues: ALL_QUEUES })
  const running = await startWorkers(platform, { queues, concurrency })
  const http = config.WORKER_PORT !== undefined ? await (await import('./platform/ops/worker-http.ts')).startWorkerHttp(platform, JOBS, config.WORKER_PORT) : null
  onShutdown(config, {
    async drain() {
      // Probes keep answering (readyz: 503) while jobs drain.
      startDraining()
      await running.close()
      if (http) await closeServer(http, config)
      await platform.close()
    },
  })
}

