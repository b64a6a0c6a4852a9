// Calls that answer a file (a PDF, an e-invoice's XML) rather than JSON: the preview, the downloads
// and the read of a received e-invoice. Same-origin with the session cookie and the CSRF token, like
// ui/api.ts; a refusal becomes the same ApiError (the API's own message), with the seconds of a 429's
// Retry-After. ui/api.ts keeps its CSRF token private, so the session hands it here too.
import { ApiError, fieldOf } from '../ui/api.ts'

let csrf: string | null = null
export function setFileCsrf(token: string | null): void {
  csrf = token
}

let onUnauthorized: (message: string) => void = () => {}
/** What a 401 means here (the session ended: the key was rotated elsewhere); the session sets it. */
export function handleFileUnauthorized(fn: (message: string) => void): void {
  onUnauthorized = fn
}

export class FileError extends ApiError {
  constructor(
    status: number,
    message: string,
    body: any,
    /** Seconds from a 429's or 503's Retry-After, else null. */
    readonly retryAfter: number | null,
  ) {
    super(status, message, fieldOf(message), body)
  }
}

export interface FileAnswer {
  blob: Blob
  type: string
  /** From Content-Disposition (`invoice.pdf`), else null. */
  filename: string | null
}

export async function fetchFile(path: string, opts: { body: BodyInit; contentType: string; signal?: AbortSignal }): Promise<FileAnswer> {
  const headers: Record<string, string> = { 'content-type': opts.contentType }
  if (csrf) headers['x-csrf-token'] = csrf
  let res: Response
  try {
    res = await fetch(path, { method: 'POST', headers, body: opts.body, credentials: 'same-origin', signal: opts.signal })
  } catch (e) {
    if ((e as Error).name === 'AbortError') throw e
    throw new FileError(0, 'The invoice service cannot be reached. Check the connection and try again.', null, null)
  }
  if (!res.ok) {
    const text = await res.text()
    let body: any = null
    try {
      body = JSON.parse(text)
    } catch {
      /* not JSON */
    }
    const retry = Number(res.headers.get('retry-after'))
    const message = typeof body?.error === 'string' ? body.error : `The service answered ${res.status}`
    if (res.status === 401) onUnauthorized(message)
    throw new FileError(res.status, message, body, Number.isFinite(retry) && retry > 0 ? Math.ceil(retry) : null)
  }
  const blob = await res.blob()
  const filename = /filename="([^"]+)"/.exec(res.headers.get('content-disposition') ?? '')?.[1] ?? null
  return { blob, type: (res.headers.get('content-type') ?? '').split(';')[0]!, filename }
}

export const postJsonForFile = (path: string, body: unknown, signal?: AbortSignal) => fetchFile(path, { body: JSON.stringify(body), contentType: 'application/json', signal })

/** Hands a blob to the browser as a download named `name`. */
export function saveBlob(blob: Blob, name: string): void {
  const url = URL.createObjectURL(blob)
  const a = document.createElement('a')
  a.href = url
  a.download = name
  a.className = 'offscreen'
  document.body.append(a)
  a.click()
  a.remove()
  setTimeout(() => URL.revokeObjectURL(url), 60_000)
}
