// An endpoint's live stream (GET …/stream, Server-Sent Events, with the session cookie): the
// endpoint page reloads what it shows shortly after captures and forward attempts happen, instead
// of waiting for Refresh. Bursts are gathered into one reload; `live` says whether the stream is open.
import { signal } from '@preact/signals'
import { seg } from '../ui/api.ts'

export const live = signal<'connecting' | 'open' | 'down'>('connecting')

const EVENTS = ['capture', 'forward']

export function watchEndpoint(token: string, onActivity: () => void, gatherMs = 400): () => void {
  const es = new EventSource(`/api/v1/endpoints/${seg(token)}/stream`, { withCredentials: true })
  let timer: ReturnType<typeof setTimeout> | undefined
  const bump = () => {
    clearTimeout(timer)
    timer = setTimeout(onActivity, gatherMs)
  }
  let opened = false
  live.value = 'connecting'
  es.onopen = () => {
    live.value = 'open'
    // After a reconnect, what happened meanwhile is read again.
    if (opened) bump()
    opened = true
  }
  es.onerror = () => {
    live.value = 'down'
  }
  for (const e of EVENTS) es.addEventListener(e, bump)
  return () => {
    clearTimeout(timer)
    es.close()
    live.value = 'connecting'
  }
}
