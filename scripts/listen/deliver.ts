// Re-sends one captured request to the local URL byte-exact: same method, sub-path and query
// appended to --forward-to, the raw header list in arrival order minus hop-by-hop headers (the
// rules forwards use, src/webhooks/forward/outbound.ts), and the exact body bytes. No SSRF guard here:
// this runs on the developer's own machine and its whole point is to reach localhost. --header
// adds or replaces headers on this local request only; the capture keeps what the sender sent.
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
  /** --header values, [name, value] in the order given: each replaces every captured header of that name. */
  extraHeaders?: [string, string][]
}

/** Headers that frame the request; replacing them would make the body unreadable to the target. */
const FRAMING = new Set(['content-length', 'transfer-encoding', 'connection'])

/** Parses one `--header 'Name: value'`, or throws with the reason. */
export function parseHeaderOption(v: string): [string, string] {
  const colon = v.indexOf(':')
  const name = colon < 0 ? '' : v.slice(0, colon).trim()
  const value = v.slice(colon + 1).trim()
  if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) throw new Error(`--header takes 'Name: value' (got ${JSON.stringify(v)})`)
  if (!/^[\t\x20-\x7e\x80-\xff]*$/.test(value)) throw new Error(`--header ${name}: the value must be one line of printable characters`)
  if (FRAMING.has(name.toLowerCase())) throw new Error(`--header cannot set ${name}: listen sets it from the captured body`)
  return [name, value]
}

function withExtra(raw: string[], extra: [string, string][]): string[] {
  if (!extra.length) return raw
  const replaced = new Set(extra.map(([n]) => n.toLowerCase()))
  const out: string[] = []
  for (let i = 0; i + 1 < raw.length; i += 2) if (!replaced.has(raw[i]!.toLowerCase())) out.push(raw[i]!, raw[i + 1]!)
  for (const [n, v] of extra) out.push(n, v)
  return out
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
    const r = client.request(target, { method: req.method, headers: withExtra(outboundHeaders(req.rawHeaders, target, req.body.length), req.extraHeaders ?? []) as any, timeout: TIMEOUT_MS })
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
