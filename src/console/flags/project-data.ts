// What every screen of an open project shares: the project, its environments and segments, and
// the project's change stream (one EventSource while the project is open). `lastChange` carries
// each change event to the screens that show what it touched.
import { signal } from '@preact/signals'
import { api, ApiError, reconnects, reportUnauthorized, seg } from '../ui/api.ts'
import { subscribe } from '../ui/live.ts'
import { noteStreamEnded } from './session.ts'
import type { Environment, Project, Segment } from './types.ts'

export interface ChangeEvent {
  kind: 'flag' | 'segment' | 'environment' | 'project'
  key: string
  environment?: string | null
  version?: number
  deleted?: boolean
  /** Increases with every event, so an effect runs again for two equal events. */
  n: number
}

export const project = signal<Project | null>(null)
export const environments = signal<Environment[]>([])
export const segments = signal<Segment[]>([])
export const projectError = signal<string | null>(null)
export const lastChange = signal<ChangeEvent | null>(null)
/** Increases when the stream reopened after a break: screens reload what they show. */
export const resynced = signal(0)

let openId: string | null = null
let close: (() => void) | null = null
let n = 0

export const base = (id: string) => `/api/v1/projects/${seg(id)}`

export async function reloadProject(id = openId): Promise<void> {
  if (!id) return
  try {
    const [p, e, s] = await Promise.all([
      api<Project>('GET', base(id)),
      api<{ environments: Environment[] }>('GET', `${base(id)}/environments`),
      api<{ segments: Segment[] }>('GET', `${base(id)}/segments`),
    ])
    if (openId !== id) return
    project.value = p.data
    environments.value = e.data.environments
    segments.value = s.data.segments
    projectError.value = null
  } catch (e) {
    if (openId === id && e instanceof ApiError && e.status !== 0) projectError.value = e.message
  }
}

/** Opens the project (loads it, follows its stream); a no-op when it is already open. */
export function openProject(id: string | null): void {
  if (id === openId) return
  close?.()
  close = null
  openId = id
  project.value = null
  environments.value = []
  segments.value = []
  projectError.value = null
  if (!id) return
  void reloadProject(id)
  let ready = false
  close = subscribe(`${base(id)}/events`, {
    on: {
      // The service sends `ready` once it follows the project: a change made between the screens'
      // first reads and that moment reached no stream, so they read once more (once per opening;
      // a reconnect reloads through onReopen).
      ready: () => {
        if (ready) return
        ready = true
        void reloadProject(id)
        resynced.value++
      },
      change: (data) => {
        const ev = { ...data, n: ++n } as ChangeEvent
        if (ev.kind === 'environment' || ev.kind === 'segment' || ev.kind === 'project') void reloadProject(id)
        lastChange.value = ev
      },
      // More was missed than the service can replay: read everything again.
      reset: () => {
        void reloadProject(id)
        resynced.value++
      },
      // The credentials no longer hold (a revoked key, a deleted project): reading the project
      // again gets the API's own answer (401 ends the session with its message; 404 says so).
      ended: (data) => {
        noteStreamEnded(typeof data?.error === 'string' ? data.error : undefined)
        close?.()
        close = null
        void reloadProject(id)
      },
    },
    onReopen: () => {
      void reloadProject(id)
      resynced.value++
    },
    onRefused: (status, message) => {
      close = null
      if (status === 401) reportUnauthorized(message)
      else if (openId === id) projectError.value = message
    },
  })
}

// After the service was unreachable, what is open is read again.
reconnects.subscribe(() => {
  if (openId && reconnects.peek() > 0) {
    void reloadProject(openId)
    resynced.value++
  }
})

export const envNames = () => environments.value.map((e) => e.name)
