// The one Stripe client of a process: the official `stripe` library, sending every request through
// safe-fetch (timeouts, size caps, SSRF guard), pointed at STRIPE_API_BASE when set (the simulator),
// with our own p-retry policy instead of the library's retries.
import pRetry from 'p-retry'
import Stripe from 'stripe'
import type { Config } from '../config.ts'
import { safeFetch } from '../outbound/safe-fetch.ts'

export type { Stripe }

/** Stripe is given this long per request; checkout retries stay well inside a client's patience. */
const REQUEST_TIMEOUT_MS = 10_000

/** A `fetch` for the stripe library's FetchHttpClient that is really safe-fetch. */
function safeFetchForStripe(allowPrivate: boolean): typeof fetch {
  return (async (input: string | URL | Request, init: RequestInit = {}) => {
    const headers: Record<string, string> = {}
    new Headers(init.headers).forEach((v, k) => (headers[k] = v))
    const body = typeof init.body === 'string' ? Buffer.from(init.body) : undefined
    if (body) headers['content-length'] = String(body.length)
    const res = await safeFetch(String(input), {
      method: init.method ?? 'GET',
      headers,
      body,
      timeoutMs: REQUEST_TIMEOUT_MS,
      maxBytes: 2 * 1024 * 1024,
      allowPrivate,
    })
    const nullBody = res.status === 204 || res.status === 304
    return new Response(nullBody ? null : new Uint8Array(res.body), { status: res.status, headers: res.headers })
  }) as typeof fetch
}

/** null when billing is not configured (production without STRIPE_SECRET_KEY). */
export function createStripeClient(config: Config): Stripe | null {
  if (!config.STRIPE_SECRET_KEY) return null
  if (!config.STRIPE_WEBHOOK_SECRET) {
    throw new Error('Invalid configuration: STRIPE_WEBHOOK_SECRET: required when STRIPE_SECRET_KEY is set')
  }
  const base = config.STRIPE_API_BASE ? new URL(config.STRIPE_API_BASE) : null
  // An API address the operator configured is trusted like Stripe itself (the local simulator
  // listens on loopback); the guard still applies to everything users can influence.
  const allowPrivate = config.outboundAllowPrivate || base !== null
  return new Stripe(config.STRIPE_SECRET_KEY, {
    httpClient: Stripe.createFetchHttpClient(safeFetchForStripe(allowPrivate)),
    maxNetworkRetries: 0,
    timeout: REQUEST_TIMEOUT_MS,
    telemetry: false,
    ...(base
      ? {
          host: base.hostname,
          port: base.port || (base.protocol === 'https:' ? 443 : 80),
          protocol: base.protocol === 'https:' ? 'https' : 'http',
        }
      : {}),
  })
}

/** Network errors, timeouts, 5xx and 429 are worth another try; a 4xx will not change. */
export function isTransientStripeError(err: unknown): boolean {
  if (err instanceof Stripe.errors.StripeConnectionError) return true
  if (err instanceof Stripe.errors.StripeRateLimitError) return true
  if (err instanceof Stripe.errors.StripeError) return (err.statusCode ?? 0) >= 500
  return false
}

/** Call Stripe with a short exponential retry on transient failures (about 0.2 s + 0.4 s). */
export function withStripeRetry<T>(fn: () => Promise<T>, retries = 2): Promise<T> {
  return pRetry(fn, { retries, minTimeout: 200, factor: 2, shouldRetry: ({ error }) => isTransientStripeError(error) })
}
