// Reports a local result to the service (POST …/requests/{id}/local-delivery). The first try uses
// fetch's pooled keep-alive connection; after a silent stall that connection can be dead ("fetch
// failed", or no answer at all), so each retry opens a fresh connection and every try has a
// deadline. A report is an upsert of the last result: sending it twice does no harm.
import http from 'node:http'
import https from 'node:https'

const RETRY_WAIT_MS = [300, 1_000, 3_000]

/** One POST on a connection of its own (agent: false), bounded by tryMs. */
function freshPost(url: string, headers: Record<string, string>, body: string, tryMs: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const u = new URL(url)
    const client = u.protocol === 'https:' ? https : http
    const req = client.request(u, { method: 'POST', agent: false, headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) }, timeout: tryMs })
    req.on('timeout', () => req.destroy(new Error(`no answer within ${tryMs / 1000} s`)))
    req.on('error', reject)
    req.on('response', (res) => {
      res.resume()
      res.on('end', () => resolve(res.statusCode ?? 0))
      res.on('error', reject)
    })
    req.end(body)
  })
}

/** One POST through fetch's pool of keep-alive connections, bounded by tryMs. */
async function pooledPost(url: string, headers: Record<string, string>, body: string, tryMs: number): Promise<number> {
  const r = await fetch(url, { method: 'POST', headers, body, signal: AbortSignal.timeout(tryMs) })
  await r.arrayBuffer() // read to the end, so the connection can serve the next report
  return r.status
}

const why = (err: unknown) => {
  const e = err as Error & { cause?: Error & { code?: string } }
  return e.cause ? `${e.message} (${e.cause.code ?? e.cause.message})` : e.message
}

/** Resolves with null once reported, or with why it could not be (after every retry). */
export async function reportResult(url: string, headers: Record<string, string>, result: unknown, tryMs = 10_000): Promise<string | null> {
  const body = JSON.stringify(result)
  const h = { ...headers, 'content-type': 'application/json' }
  let last = ''
  for (let attempt = 0; attempt <= RETRY_WAIT_MS.length; attempt++) {
    try {
      const status = attempt === 0 ? await pooledPost(url, h, body, tryMs) : await freshPost(url, h, body, tryMs)
      // A 4xx will not change on a retry (the capture was deleted, the key revoked).
      if (status < 500) return status < 300 ? null : `HTTP ${status}`
      last = `HTTP ${status}`
    } catch (err) {
      last = why(err)
    }
    if (attempt < RETRY_WAIT_MS.length) await new Promise((r) => setTimeout(r, RETRY_WAIT_MS[attempt]))
  }
  return last
}
