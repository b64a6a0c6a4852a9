// A client of an endpoint's live stream (GET /api/v1/endpoints/{token}/stream): fetch() with the
// key in the Authorization header (EventSource cannot send one), the bytes parsed by
// eventsource-parser. One connection per call; reconnecting is the caller's decision (listen.ts).
import { createParser, type EventSourceMessage } from 'eventsource-parser'

export interface StreamOptions {
  /** Host root of the webhooks service, e.g. http://localhost:3003. */
  api: string
  token: string
  key: string
  /** Resume after this capture id (sent as Last-Event-ID). */
  lastEventId?: number
  onEvent(ev: EventSourceMessage): void
  /** Any bytes (events, heartbeats): the caller's watchdog. */
  onActivity?(): void
  signal?: AbortSignal
}

export class StreamRefused extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message)
  }
}

/**
 * Opens the stream; `opened` resolves once the server answered 200 (rejects with StreamRefused
 * on 4xx/5xx), `ended` when the connection ends for any reason.
 */
export function openStream(opts: StreamOptions): { opened: Promise<void>; ended: Promise<void> } {
  const headers: Record<string, string> = { authorization: `Bearer ${opts.key}`, accept: 'text/event-stream' }
  if (opts.lastEventId !== undefined) headers['last-event-id'] = String(opts.lastEventId)
  const url = `${opts.api.replace(/\/+$/, '')}/api/v1/endpoints/${encodeURIComponent(opts.token)}/stream`
  const response = fetch(url, { headers, signal: opts.signal, cache: 'no-store' })
  const opened = response.then(async (r) => {
    if (r.status !== 200) {
      const body = (await r.json().catch(() => ({}))) as { error?: string }
      throw new StreamRefused(r.status, body.error ?? `HTTP ${r.status}`)
    }
  })
  const ended = response.then(async (r) => {
    if (r.status !== 200 || !r.body) return
    const parser = createParser({ onEvent: opts.onEvent })
    const decoder = new TextDecoder()
    for await (const chunk of r.body as unknown as AsyncIterable<Uint8Array>) {
      opts.onActivity?.()
      parser.feed(decoder.decode(chunk, { stream: true }))
    }
  })
  return { opened, ended }
}
