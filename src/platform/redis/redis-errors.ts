// Redis outages in the log: once per connection per outage, through the project's logger.
// ioredis emits 'error' at every failed reconnect (every ≤ 2 s here) and prints
// "[ioredis] Unhandled error event" for a client nobody listens to. BullMQ's Worker and
// QueueEvents duplicate the connection they are given and never listen to the original, and
// forward their duplicates' errors to their own 'error' event, again once per attempt.
import type { EventEmitter } from 'node:events'
import { logger } from '../logger.ts'

/** Minimal shape of what emits 'error' and 'ready' (ioredis Redis / Cluster). */
type Emitter = Pick<EventEmitter, 'on'>

/**
 * Errors that mean "Redis cannot be reached or cannot serve right now", as opposed to an error of
 * one command or job: socket errors, a closed or unwritable connection, timeouts, a failover in
 * progress (READONLY, LOADING, MASTERDOWN, CLUSTERDOWN, TRYAGAIN), a cluster or sentinel set with
 * no reachable node.
 */
const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN'])
const CONNECTION_MESSAGE =
  /Connection is closed|Stream isn't writeable|Command timed out|connect ETIMEDOUT|All sentinels are unreachable|Failed to refresh slots cache|None of startup nodes is available|Reached the max retries per request|^(READONLY|LOADING|MASTERDOWN|CLUSTERDOWN|TRYAGAIN)\b/

export function isRedisConnectionError(err: unknown): boolean {
  if (!(err instanceof Error)) return false
  const code = (err as NodeJS.ErrnoException).code
  return (code !== undefined && CONNECTION_CODES.has(code)) || CONNECTION_MESSAGE.test(err.message)
}

/**
 * The log of one connection's outages: the first error is logged, the following ones only counted,
 * until the connection is ready again (then one line says so, with the count).
 */
export function outageLog(fields: Record<string, unknown>): { error(err: Error): void; ready(): void } {
  const log = logger.child(fields)
  let down = 0
  let since = 0
  return {
    error(err) {
      if (down++ === 0) {
        since = Date.now()
        log.warn({ err: err.message }, 'Redis connection lost; retrying (further errors of this connection are not logged until it is back)')
      }
    },
    ready() {
      if (down === 0) return
      log.info({ errors: down, down_ms: Date.now() - since }, 'Redis connection back')
      down = 0
    },
  }
}

/** Listen to an ioredis client's errors (so ioredis never prints them) and log its outages once. */
export function watchRedisErrors(client: Emitter, fields: Record<string, unknown>): void {
  const o = outageLog(fields)
  client.on('error', (err: Error) => o.error(err))
  client.on('ready', () => o.ready())
}

/**
 * Errors a BullMQ Queue, Worker or QueueEvents forwards: connection errors of its (duplicated)
 * connections are logged once per outage, ended when `client` — the connection it was made from,
 * to the same Redis — is ready again; any other error is logged every time.
 */
export function watchBullmqErrors(emitter: Emitter, client: Emitter, fields: Record<string, unknown>, what: string): void {
  const o = outageLog(fields)
  client.on('ready', () => o.ready())
  emitter.on('error', (err: Error) => {
    if (isRedisConnectionError(err)) o.error(err)
    else logger.error({ ...fields, err: err.message }, what)
  })
}
