// Documents → API responses, field by field (the embedded engine ignores find projections, so
// nothing internal may leak by accident). Timestamps without zone designator; bodies as text
// when they are valid UTF-8, otherwise base64 with body_encoding saying so.
import { isUtf8 } from 'node:buffer'
import type { Context } from 'koa'
import type { Account } from '../../platform/accounts.ts'
import type { Config } from '../../platform/config.ts'
import { inlineBytes } from './body-store.ts'
import type { AttemptDoc, CaptureDoc, ForwardState, LocalDelivery } from './capture-store.ts'
import { effectiveExpiry, type EndpointDoc } from './endpoint-store.ts'
import { wireTime } from './time.ts'
import { dayKey } from '../../platform/clock.ts'
import { FORWARD_WINDOW, windowOf, type ForwardStatsDoc } from './forward-stats.ts'

/** The base address handed out in URLs: configured, or the address the client used. */
export function publicBase(ctx: Context, config: Config): string {
  return (config.WEBHOOKS_PUBLIC_URL ?? `${ctx.protocol}://${ctx.host}`).replace(/\/+$/, '')
}

export function presentEndpoint(ep: EndpointDoc, account: Pick<Account, 'plan'>, base: string, requestCount?: number) {
  return {
    endpoint_id: ep._id,
    url: `${base}/hook/${ep._id}`,
    inspect_url: `${base}/inspect/${ep._id}`,
    name: ep.name,
    response_code: ep.response_code,
    response_body: ep.response_body,
    response_content_type: ep.response_content_type,
    forward_url: ep.forward_url,
    forward_paused: ep.forward_paused ?? false,
    created_at: wireTime(ep.created_at),
    expires_at: wireTime(effectiveExpiry(ep, account)),
    ...(requestCount === undefined ? {} : { request_count: requestCount }),
  }
}

/**
 * What the endpoints overview adds to an endpoint: captures today (UTC), when the last request
 * arrived, and the forward target's health (endpoints with a forward_url). All read from counters
 * kept as captures and attempts happen (endpoint-store.ts, forward-stats.ts): nothing is counted here.
 */
export function presentOverview(ep: EndpointDoc, stats: ForwardStatsDoc | undefined, now: Date) {
  const { attempts, succeeded } = windowOf(stats)
  return {
    captures_today: ep.captures_by_day?.[dayKey(now)] ?? 0,
    last_request_at: wireTime(ep.last_request_at ?? null),
    forward_health: ep.forward_url
      ? {
          window: FORWARD_WINDOW,
          attempts,
          succeeded,
          success_rate: attempts ? succeeded / attempts : null,
          last_attempt_at: wireTime(stats?.last_attempt_at ?? null),
          last_success_at: wireTime(stats?.last_success_at ?? null),
          last_error: stats?.last_error ? { message: stats.last_error.message, status: stats.last_error.status, at: wireTime(stats.last_error.at) } : null,
          dead_lettered: Math.max(0, stats?.dead ?? 0),
        }
      : null,
  }
}

export function encodeBody(bytes: Buffer): { body: string; body_encoding: 'utf8' | 'base64' } {
  return isUtf8(bytes) ? { body: bytes.toString('utf8'), body_encoding: 'utf8' } : { body: bytes.toString('base64'), body_encoding: 'base64' }
}

export function presentForward(f: ForwardState) {
  return {
    status: f.status,
    attempts: f.attempts,
    last_status: f.last_status,
    last_error: f.last_error,
    next_attempt_at: wireTime(f.next_attempt_at),
    delivered_at: wireTime(f.delivered_at),
  }
}

export function presentLocalDelivery(d: LocalDelivery) {
  return { url: d.url, status: d.status, latency_ms: d.latency_ms, body_preview: d.body_preview, error: d.error, at: wireTime(d.at) }
}

export function presentAttempt(a: AttemptDoc) {
  return {
    attempt: a.attempt,
    round: a.round,
    url: a.url,
    at: wireTime(a.at),
    status: a.status,
    latency_ms: a.latency_ms,
    ok: a.ok,
    error: a.error,
  }
}

/**
 * A captured request. `bytes` is the full body when the caller has it; in lists, bodies stored
 * outside the document (over 1 MiB) are left out with body_omitted: true (GET the request).
 */
export function presentCapture(c: CaptureDoc, bytes?: Buffer) {
  const b = bytes ?? (c.body ? inlineBytes(c.body) : undefined)
  return {
    id: c.id,
    method: c.method,
    path: c.path,
    query: c.query,
    headers: c.headers,
    raw_headers: c.raw_headers,
    ...(b ? encodeBody(b) : { body: null, body_encoding: null, body_omitted: true }),
    content_type: c.content_type,
    ip_address: c.ip_address,
    size_bytes: c.size_bytes,
    received_at: wireTime(c.received_at),
    ...(c.forward ? { forward: presentForward(c.forward) } : {}),
    ...(c.local_delivery ? { local_delivery: presentLocalDelivery(c.local_delivery) } : {}),
  }
}
