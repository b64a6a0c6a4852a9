// Re-sends one captured request to the local URL byte-exact: same method, sub-path and query
// appended to --forward-to, the raw header list in arrival order minus hop-by-hop headers (the
// rules forwards use, src/webhooks/forward/outbound.ts), and the exact body bytes. No SSRF guard here:
// this runs on the developer's own machine and its whole point is to reach localhost.
import http from 'node:http'
import https from 'node:https'
import { outboundHeaders, SubPathEscapeError, targetUrl } from '../../src/webhooks/forward/outbound.ts'

export interface LocalResult {
  url: string
  status: number | null
  latency_ms: number
  /** The first bytes of the answer, as text. */
  body_preview: string
  error: string | null
}

const PREVIEW_BYTES = 1_024
const TIMEOUT_MS = 30_000

export interface CapturedRequest {
  method: string
  subPath: string
  query: string
  rawHeaders: string[]
  body: Buffer
}

export function deliverLocally(forwardTo: string, req: CapturedRequest): Promise<LocalResult> {
  const started = performance.now()
  let url: string
  try {
    url = targetUrl(forwardTo, req.subPath, req.query)
  } catch (err) {
    // The same rule as the service's forwards: nothing above --forward-to's path is reached.
    if (!(err instanceof SubPathEscapeError)) throw err
    return Promise.resolve({ url: forwardTo, status: null, latency_ms: 0, body_preview: '', error: err.message })
  }
  const target = new URL(url)
  const done = (status: number | null, preview: Buffer, error: string | null): LocalResult => ({
    url,
    status,
    latency_ms: Math.round(performance.now() - started),
    body_preview: preview.toString('utf8'),
    error,
  })
  return new Promise((resolve) => {
    const client = target.protocol === 'https:' ? https : http
    const r = client.request(target, { method: req.method, headers: outboundHeaders(req.rawHeaders, target, req.body.length) as any, timeout: TIMEOUT_MS })
    r.on('timeout', () => r.destroy(new Error(`no answer within ${TIMEOUT_MS / 1000} s`)))
    r.on('error', (err) => resolve(done(null, Buffer.alloc(0), (err as NodeJS.ErrnoException).code ?? err.message)))
    r.on('response', (res) => {
      const chunks: Buffer[] = []
      let kept = 0
      res.on('data', (c: Buffer) => {
        if (kept < PREVIEW_BYTES) {
          chunks.push(c.subarray(0, PREVIEW_BYTES - kept))
          kept += Math.min(c.length, PREVIEW_BYTES - kept)
        }
      })
      res.on('end', () => resolve(done(res.statusCode ?? null, Buffer.concat(chunks), null)))
      res.on('error', (err) => resolve(done(res.statusCode ?? null, Buffer.concat(chunks), err.message)))
    })
    r.end(req.body.length ? req.body : undefined)
  })
}
