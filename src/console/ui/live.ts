// A subscription to a Server-Sent Events stream of the service (same origin, the session cookie
// goes with it). EventSource reconnects by itself; `connected` says whether it is open now, and
// `onReopen` runs after a reconnect so a screen can reload what it may have missed.
import { signal } from '@preact/signals'
import { probe } from './api.ts'

export const streamConnected = signal(false)

export function subscribe(url: string, event: string, onEvent: (data: any) => void, onReopen?: () => void): () => void {
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
  const handler = (e: MessageEvent) => {
    try {
      onEvent(JSON.parse(e.data))
    } catch {
      /* not ours */
    }
  }
  es.addEventListener(event, handler as EventListener)
  return () => {
    es.close()
    streamConnected.value = false
  }
}
