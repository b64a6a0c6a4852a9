// An endpoint's live stream (GET …/stream, Server-Sent Events, with the session cookie): the
// endpoint page reloads what it shows shortly after captures and forward attempts happen, instead
// of waiting for Refresh. Bursts are gathered into one reload; `live` says whether the stream is open.
// The endpoint's own changes come on it too: new settings (`endpoint`, the endpoint as GET answers
// it) are handed over at once, and a deletion (`endpoint_deleted`) closes the stream for good, since
// reconnecting would only meet a 404.
import { signal } from '@preact/signals'
import { seg } from '../ui/api.ts'
import type { Endpoint } from './types.ts'

export const live = signal<'connecting' | 'open' | 'down' | 'ended'>('connecting')

const EVENTS = ['capture', 'forward']

export interface EndpointWatch {
  /** Captures or forward attempts happened (gathered: one call per burst). */
  onActivity(): void
  /** The endpoint's settings changed (here or elsewhere): as GET …/endpoints/{token} answers them. */
  onSettings(ep: Endpoint): void
  /** The endpoint was deleted (here or elsewhere). */
  onDeleted(): void
}

export function watchEndpoint(token: string, on: EndpointWatch, gatherMs = 400): () => void {
  const es = new EventSource(`/api/v1/endpoints/${seg(token)}/stream`, { withCredentials: true })
  let timer: ReturnType<typeof setTimeout> | undefined
  const bump = () => {
    clearTimeout(timer)
    timer = setTimeout(on.onActivity, gatherMs)
  }
  live.value = 'connecting'
  es.onopen = () => {
    live.value = 'open'
    // What happened before the stream was open reached no stream: read again, on the first open
    // too (a capture between the page's first read and the stream's start), settings included.
    bump()
  }
  es.onerror = () => {
    if (live.value !== 'ended') live.value = 'down'
  }
  for (const e of EVENTS) es.addEventListener(e, bump)
  es.addEventListener('endpoint', (e) => {
    try {
      on.onSettings(JSON.parse((e as MessageEvent<string>).data) as Endpoint)
    } catch {
      bump() // unreadable: read it the ordinary way
    }
  })
  es.addEventListener('endpoint_deleted', () => {
    clearTimeout(timer)
    es.close()
    live.value = 'ended'
    on.onDeleted()
  })
  return () => {
    clearTimeout(timer)
    es.close()
    live.value = 'connecting'
  }
}
