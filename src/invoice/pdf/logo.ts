// Logo fetching for invoices: through the safe fetch, PNG/JPEG by magic bytes, at most 2 MB.
// Results (and failures, briefly) are cached per worker process so a batch that names the same
// logo a thousand times fetches it once.
import { LRUCache } from 'lru-cache'
import { OutboundError, safeFetch } from '../../platform/outbound/safe-fetch.ts'

export const MAX_LOGO_BYTES = 2 * 1024 * 1024

export class LogoError extends Error {}

/** Raised by the render thread (matched by message: errors cross the thread boundary as plain Errors)
 *  when a logo has PNG/JPEG magic bytes but cannot be decoded. */
export const INVALID_LOGO = 'logo_url is not a valid PNG or JPEG image'

type Entry = { ok: true; dataUrl: string } | { ok: false; message: string }

const cache = new LRUCache<string, Entry>({ max: 200, maxSize: 64 * 1024 * 1024, sizeCalculation: (e) => (e.ok ? e.dataUrl.length : 64), ttl: 10 * 60_000 })
const inflight = new Map<string, Promise<Entry>>()

export function sniffImage(buf: Buffer): 'image/png' | 'image/jpeg' | null {
  if (buf.length >= 8 && buf.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return 'image/png'
  if (buf.length >= 3 && buf[0] === 0xff && buf[1] === 0xd8 && buf[2] === 0xff) return 'image/jpeg'
  return null
}

async function load(url: string, allowPrivate: boolean): Promise<Entry> {
  try {
    const res = await safeFetch(url, { allowPrivate, timeoutMs: 8_000, maxBytes: MAX_LOGO_BYTES, maxRedirects: 3 })
    if (res.status < 200 || res.status >= 300) return { ok: false, message: `logo_url could not be fetched (HTTP ${res.status})` }
    const type = sniffImage(res.body)
    if (!type) return { ok: false, message: 'logo_url must point to a PNG or JPEG image' }
    return { ok: true, dataUrl: `data:${type};base64,${res.body.toString('base64')}` }
  } catch (err) {
    if (err instanceof OutboundError) {
      const reason =
        err.code === 'too_large' ? 'logo_url image exceeds 2 MB'
        : err.code === 'timeout' ? 'logo_url could not be fetched (timed out)'
        : err.code === 'blocked' ? 'logo_url points to a private or reserved address'
        : err.code === 'invalid_url' ? `logo_url is not a valid http(s) URL`
        : `logo_url could not be fetched (${err.message})`
      return { ok: false, message: reason }
    }
    throw err
  }
}

/** The logo as a data: URL, or a LogoError naming why it cannot be used. */
export async function fetchLogo(url: string, allowPrivate: boolean): Promise<string> {
  // The policy is part of the key: a logo fetched under one SSRF policy is never served under another.
  const key = `${allowPrivate ? 'any' : 'public'} ${url}`
  let entry = cache.get(key)
  if (!entry) {
    let p = inflight.get(key)
    if (!p) {
      p = load(url, allowPrivate).finally(() => inflight.delete(key))
      inflight.set(key, p)
    }
    entry = await p
    cache.set(key, entry, entry.ok ? {} : { ttl: 30_000 })
  }
  if (!entry.ok) throw new LogoError(entry.message)
  return entry.dataUrl
}
