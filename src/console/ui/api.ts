// The console's one way to call its service's JSON API: same-origin fetch with the session cookie,
// the CSRF token on unsafe methods, If-Match when the caller holds a version, and every non-2xx
// answer turned into an ApiError carrying the API's own message and the field it names. A
// network failure or a 502/503/504 marks the service unreachable (apiDown) and starts polling
// until it answers again, so every screen can show one banner and recover by itself.
import { signal } from '@preact/signals'

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** The field the API named at the start of its message (`rules[0].value`), or null. */
    readonly field: string | null,
    readonly body: any,
  ) {
    super(message)
  }
}

export interface ApiAnswer<T> {
  data: T
  status: number
  /** The version in the answer's ETag (`"7"` → 7), or null. */
  version: number | null
}

/** True while the service cannot be reached (network error or 502/503/504). */
export const apiDown = signal(false)
/** Increases each time the service answers again after being down: screens reload on it. */
export const reconnects = signal(0)

let serviceName = 'The service'
/** How messages name the service ("The invoice service cannot be reached"): set once by each console's entry. */
export function nameService(name: string): void {
  serviceName = name
}

let csrfToken: string | null = null
/** Kept in memory only: re-read from GET /console/session on each load (never localStorage). */
export function setCsrfToken(token: string | null): void {
  csrfToken = token
}

type UnauthorizedHandler = (message: string) => void
let onUnauthorized: UnauthorizedHandler = () => {}
/** What to do when a signed-in call answers 401 (a revoked key or an expired session). */
export function handleUnauthorized(fn: UnauthorizedHandler): void {
  onUnauthorized = fn
}

/** A 401 met outside api() (a stream refused): handled as api() handles its own. */
export function reportUnauthorized(message: string): void {
  onUnauthorized(message)
}

// Validation messages start with the path of the field they are about: `rules[0].conditions[1].value must …`.
const FIELD_RE = /^([a-z_][a-z0-9_]*(?:\[\d+\]|\.[a-z_][a-z0-9_]*)*) (?:must|is|has|cannot|should|:)/

/** The field an API message names at its start, or null ("Flag not found" names none). */
export function fieldOf(message: string): string | null {
  return FIELD_RE.exec(message)?.[1] ?? null
}

export interface CallOptions {
  body?: unknown
  /** The version this change was made on: sent as If-Match, so a stale edit gets a 412. */
  ifMatch?: number | null
  signal?: AbortSignal
  /** A 401 here is an answer for the caller (signing in), not the end of a session. */
  anonymous?: boolean
}

const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])

export async function api<T = any>(method: string, path: string, options: CallOptions = {}): Promise<ApiAnswer<T>> {
  const headers: Record<string, string> = { accept: 'application/json' }
  if (options.body !== undefined) headers['content-type'] = 'application/json'
  if (UNSAFE.has(method) && csrfToken) headers['x-csrf-token'] = csrfToken
  if (options.ifMatch != null) headers['if-match'] = `"${options.ifMatch}"`
  let res: Response
  try {
    res = await fetch(path, {
      method,
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      credentials: 'same-origin',
      signal: options.signal,
    })
  } catch (e) {
    if ((e as Error).name === 'AbortError') throw e
    markDown()
    throw new ApiError(0, `${serviceName} cannot be reached. Retrying…`, null, null)
  }
  if (res.status === 502 || res.status === 503 || res.status === 504) {
    markDown()
    throw new ApiError(res.status, `${serviceName} is restarting or unavailable. Retrying…`, null, null)
  }
  if (apiDown.value) markUp()
  const text = await res.text()
  let body: any = null
  if (text) {
    try {
      body = JSON.parse(text)
    } catch {
      body = null
    }
  }
  if (!res.ok) {
    const message = typeof body?.error === 'string' ? body.error : `The service answered ${res.status}`
    if (res.status === 401 && !options.anonymous) onUnauthorized(message)
    throw new ApiError(res.status, message, fieldOf(message), body)
  }
  return { data: body as T, status: res.status, version: versionOf(res.headers.get('etag'), body) }
}

function versionOf(etag: string | null, body: any): number | null {
  const m = etag && /^(?:W\/)?"(\d+)"$/.exec(etag)
  if (m) return Number(m[1])
  return typeof body?.version === 'number' ? body.version : null
}

// While down, one cheap request a second (the service's health check) finds it back.
let polling = false
function markDown(): void {
  apiDown.value = true
  if (polling) return
  polling = true
  const tick = async () => {
    try {
      const r = await fetch('/healthz', { credentials: 'same-origin' })
      if (r.ok) {
        polling = false
        markUp()
        return
      }
    } catch {
      /* still down */
    }
    setTimeout(tick, 1000)
  }
  setTimeout(tick, 1000)
}

/** Asks the health check once (a stream broke, say): a failure marks the service unreachable. */
export async function probe(): Promise<void> {
  if (polling) return
  try {
    const r = await fetch('/healthz', { credentials: 'same-origin' })
    if (r.ok) return markUp()
    if (r.status < 502) return
  } catch {
    /* unreachable */
  }
  markDown()
}

function markUp(): void {
  if (!apiDown.value) return
  apiDown.value = false
  reconnects.value++
}

/** Encodes one path segment (flag keys may hold dots; ids are plain). */
export const seg = (s: string) => encodeURIComponent(s)
