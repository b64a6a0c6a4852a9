// A subscription to a Server-Sent Events stream of the service (same origin, the session cookie
// goes with it). EventSource reconnects by itself; `connected` says whether it is open now, and
// `onReopen` runs after a reconnect so a screen can reload what it may have missed.
import { signal } from '@preact/signals'
import { probe } from './api.ts'

export const streamConnected = signal(false)

/** Follows `url`, calling `on[event]` with each event's JSON data. */
export function subscribe(url: string, on: Record<string, (data: any) => void>, onReopen?: () => void): () => void {
  const es = new EventSource(url, { withCredentials: true })
  let opened = false
  es.onopen = () => {
    streamConnected.value = true
    if (opened) onReopen?.()
    opened = true
  }
  es.onerror = () => {
    streamConnected.value = false
    // A stream that breaks is often the first sign of a service going away: say so at once.
    void probe()
  }
  for (const [event, fn] of Object.entries(on)) {
    es.addEventListener(event, ((e: MessageEvent) => {
      let data: unknown
      try {
        data = JSON.parse(e.data)
      } catch {
        return // not ours
      }
      fn(data)
    }) as EventListener)
  }
  return () => {
    es.close()
    streamConnected.value = false
  }
}
