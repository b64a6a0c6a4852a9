// A subscription to a Server-Sent Events stream of the service (same origin, the session cookie
// goes with it). When the stream breaks, the console reconnects by itself rather than leaving it to
// EventSource: a refused reconnect is then read like any answer (EventSource hides a 401's body,
// and the service says why a session ended only once), and `onRefused` hears it. `connected` says
// whether a stream is open now; `onReopen` runs after a reconnect, so a screen reloads what it may
// have missed.
import { signal } from '@preact/signals'
import { probe } from './api.ts'

export const streamConnected = signal(false)

export interface Subscription {
  /** Follows `url`, calling `on[event]` with each event's JSON data. */
  on: Record<string, (data: any) => void>
  onReopen?: () => void
  /** The service refused the stream (401, 403, 404) with this message: no more retries. */
  onRefused?: (status: number, message: string) => void
}

export function subscribe(url: string, sub: Subscription): () => void {
  let es: EventSource | null = null
  let stopped = false
  let opened = false
  let wait = 500
  let timer: ReturnType<typeof setTimeout> | undefined
  const later = () => {
    timer = setTimeout(check, wait)
    wait = Math.min(wait * 2, 5_000)
  }
  const open = () => {
    const source = new EventSource(url, { withCredentials: true })
    es = source
    source.onopen = () => {
      streamConnected.value = true
      wait = 500
      if (opened) sub.onReopen?.()
      opened = true
    }
    source.onerror = () => {
      streamConnected.value = false
      source.close()
      if (es === source) es = null
      // A stream that breaks is often the first sign of a service going away: say so at once.
      void probe()
      if (!stopped) later()
    }
    for (const [event, fn] of Object.entries(sub.on)) {
      source.addEventListener(event, ((e: MessageEvent) => {
        let data: unknown
        try {
          data = JSON.parse(e.data)
        } catch {
          return // not ours
        }
        fn(data)
      }) as EventListener)
    }
  }
  // Before reconnecting, one plain request tells a refusal (and its reason) from a service away.
  const check = async () => {
    if (stopped) return
    const ctl = new AbortController()
    try {
      const r = await fetch(url, { credentials: 'same-origin', headers: { accept: 'text/event-stream' }, signal: ctl.signal })
      if (r.ok) {
        ctl.abort()
        if (!stopped) open()
        return
      }
      if (r.status === 401 || r.status === 403 || r.status === 404) {
        const body = await r.json().catch(() => null)
        if (!stopped) sub.onRefused?.(r.status, typeof body?.error === 'string' ? body.error : `The service answered ${r.status}`)
        return
      }
    } catch {
      /* unreachable: try again later */
    }
    if (!stopped) later()
  }
  open()
  return () => {
    stopped = true
    clearTimeout(timer)
    es?.close()
    streamConnected.value = false
  }
}
