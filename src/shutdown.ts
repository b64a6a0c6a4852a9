// How every role stops: a bounded drain, then what must never be cut (docs/operations.md, "Stopping").
import type { Server } from 'node:http'
import type { Config } from './platform/config.ts'
import { logger } from './platform/logger.ts'
import { closeGracefully } from './platform/ops/lifecycle.ts'
import { stopTracing } from './platform/tracing.ts'

export type Stopper = () => Promise<void>

/** Stop accepting, let in-flight requests finish within the shutdown grace period. */
export function closeServer(server: Server, config: Config): Promise<void> {
  return closeGracefully(server, config.SHUTDOWN_TIMEOUT_MS)
}

/**
 * A stop in two parts. `drain` (requests, workers) is bounded: after SHUTDOWN_TIMEOUT_MS (+2 s for
 * the cuts drain makes itself) `cut` ends what is still draining and the stop goes on. `finish`
 * (start's final snapshot and journal flush) is never cut: it keeps what was acknowledged, and a
 * deadline that ends it would lose that (docs/operations.md, "Stopping"). A second signal while
 * `finish` runs exits at once: the store's journal still holds every acknowledged write.
 */
export function onShutdown(config: Config, stop: { drain: Stopper; cut?: () => void; finish?: Stopper; abandon?: () => void }): void {
  let stopping = false
  let finishing = false
  const handler = (sig: string) => {
    if (stopping) {
      if (!finishing) return
      logger.warn({ sig }, 'second signal during the final snapshot: exiting now (the journal keeps what was acknowledged)')
      stop.abandon?.()
      process.exit(1)
    }
    stopping = true
    const began = performance.now()
    logger.info({ sig }, 'shutting down')
    let timer: NodeJS.Timeout | undefined
    const deadline = new Promise<'cut'>((res) => (timer = setTimeout(() => res('cut'), config.SHUTDOWN_TIMEOUT_MS + 2_000)))
    // A drain that fails still leads to `finish`: what was acknowledged is kept either way.
    const drained = stop.drain().then(
      () => 'drained' as const,
      (err) => (logger.error({ err: String(err) }, 'draining failed'), 'drained' as const),
    )
    Promise.race([drained, deadline])
      .then((how) => {
        clearTimeout(timer)
        if (how === 'cut' && !stop.cut) {
          // Nothing here to cut or keep (api, worker): the stop ends as it always did.
          logger.error('shutdown took too long; exiting')
          process.exit(1)
        }
        if (how === 'cut') {
          logger.warn({ ms: Math.round(performance.now() - began) }, 'draining took too long; cutting what is left')
          stop.cut?.()
        }
        finishing = true
        return stop.finish?.()
      })
      // Spans still buffered for the collector go out before the process ends.
      .then(stopTracing)
      .then(
        () => {
          logger.info({ ms: Math.round(performance.now() - began) }, 'stopped')
          process.exit(0)
        },
        (err) => {
          logger.error({ err: String(err) }, 'shutdown failed')
          process.exit(1)
        },
      )
  }
  process.on('SIGINT', () => handler('SIGINT'))
  process.on('SIGTERM', () => handler('SIGTERM'))
}

/** Set by `start` on the worker processes it spawns, with an IPC channel to them. */
export const STOP_WITH_PARENT = 'QW_STOP_WITH_PARENT'

