// A subscription to a Server-Sent Events stream of the service, read with fetch and
// eventsource-parser rather than EventSource: a refused stream is then an answer like any other
// (EventSource hides a 401's body, and the service says why a session ended only once, to the
// first request that meets it), and the console decides when to reconnect. Same origin, the session
// cookie goes with it; a reconnect sends Last-Event-ID so the service replays what was missed.
// `streamConnected` says whether a stream is open; `onReopen` runs after a reconnect.
import { signal } from '@preact/signals'
import { createParser } from 'eventsource-parser'
import { probe } from './api.ts'

export const streamConnected = signal(false)

export interface Subscription {
  /** Called with each event's JSON data, by event name. */
  on: Record<string, (data: any) => void>
  onReopen?: () => void
  /** The service refused the stream (401, 403, 404) with this message: no more retries. */
  onRefused?: (status: number, message: string) => void
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

export function subscribe(url: string, sub: Subscription): () => void {
  let stopped = false
  let ctl: AbortController | null = null
  const run = async () => {
    let opened = false
    let wait = 500
    let lastId: string | undefined
    while (!stopped) {
      ctl = new AbortController()
      try {
        const headers: Record<string, string> = { accept: 'text/event-stream' }
        if (lastId) headers['last-event-id'] = lastId
        const r = await fetch(url, { credentials: 'same-origin', headers, signal: ctl.signal, cache: 'no-store' })
        if (r.status === 401 || r.status === 403 || r.status === 404) {
          const body = await r.json().catch(() => null)
          if (!stopped) sub.onRefused?.(r.status, typeof body?.error === 'string' ? body.error : `The service answered ${r.status}`)
          return
        }
        if (!r.ok || !r.body) throw new Error(`stream answered ${r.status}`)
        streamConnected.value = true
        wait = 500
        if (opened) sub.onReopen?.()
        opened = true
        const parser = createParser({
          onEvent: (e) => {
            if (e.id) lastId = e.id
            const fn = sub.on[e.event ?? 'message']
            if (!fn) return
            let data: unknown
            try {
              data = JSON.parse(e.data)
            } catch {
              return // not ours
            }
            fn(data)
          },
        })
        const reader = r.body.pipeThrough(new TextDecoderStream()).getReader()
        for (;;) {
          const { done, value } = await reader.read()
          if (done) break
          parser.feed(value)
        }
      } catch {
        /* broken or unreachable: reconnect below */
      }
      streamConnected.value = false
      if (stopped) return
      // A stream that breaks is often the first sign of a service going away: say so at once.
      void probe()
      await sleep(wait)
      wait = Math.min(wait * 2, 5_000)
    }
  }
  void run()
  return () => {
    stopped = true
    ctl?.abort()
    streamConnected.value = false
  }
}
