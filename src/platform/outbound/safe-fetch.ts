// The one way the platform calls out (logos, forwards, replays, callbacks): timeouts, a response
// size cap, a redirect limit, and an SSRF guard that checks every address a host resolves to
// (loopback, private, link-local, metadata, CGNAT, multicast... are refused) unless private
// targets are allowed by configuration (local development).
import { lookup as dnsLookup, type LookupAddress } from 'node:dns'
import http from 'node:http'
import https from 'node:https'
import net from 'node:net'
import ipaddr from 'ipaddr.js'

export class OutboundError extends Error {
  constructor(
    readonly code: 'blocked' | 'invalid_url' | 'timeout' | 'too_large' | 'network' | 'redirects',
    message: string,
  ) {
    super(message)
  }
}

export interface SafeFetchOptions {
  method?: string
  /** Raw header pairs in order ([name, value, ...]) or an object. */
  headers?: string[] | Record<string, string>
  body?: Buffer
  timeoutMs?: number
  maxBytes?: number
  maxRedirects?: number
  allowPrivate: boolean
  /** Non-public addresses allowed anyway (an operator's allowlist; tests use it to reach 127.0.0.1 only). */
  allowAddress?: (address: string) => boolean
}

export interface SafeResponse {
  status: number
  headers: Record<string, string>
  rawHeaders: string[]
  body: Buffer
  url: string
}

export function isPublicAddress(addr: string): boolean {
  // Only canonical literals: ipaddr would also read classful forms such as "1.2.3".
  if (!net.isIP(addr)) return false
  let ip = ipaddr.parse(addr)
  if (ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress()) ip = (ip as ipaddr.IPv6).toIPv4Address()
  return ip.range() === 'unicast'
}

/** Validate a user-supplied URL's shape (scheme, host) without resolving it. */
export function checkUrlShape(raw: string): URL {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw new OutboundError('invalid_url', 'URL is not valid')
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new OutboundError('invalid_url', 'URL must use http or https')
  if (url.username || url.password) throw new OutboundError('invalid_url', 'URL must not contain credentials')
  if (!url.hostname) throw new OutboundError('invalid_url', 'URL must have a host')
  return url
}

function allowed(address: string, opts: SafeFetchOptions): boolean {
  return opts.allowPrivate || isPublicAddress(address) || (opts.allowAddress?.(address) ?? false)
}

function guardedLookup(opts: SafeFetchOptions) {
  return (hostname: string, options: any, cb: (err: Error | null, address: any, family?: number) => void) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
      if (err) return cb(err, undefined)
      const bad = addresses.find((a) => !allowed(a.address, opts))
      if (bad) return cb(new OutboundError('blocked', `address ${bad.address} of ${hostname} is not allowed`), undefined)
      if (options?.all) return cb(null, addresses)
      cb(null, addresses[0]!.address, addresses[0]!.family)
    })
  }
}

function once(url: URL, opts: SafeFetchOptions): Promise<SafeResponse> {
  const host = url.hostname.replace(/^\[|\]$/g, '')
  if (net.isIP(host) && !allowed(host, opts)) {
    return Promise.reject(new OutboundError('blocked', `address ${host} is not allowed`))
  }
  const mod = url.protocol === 'https:' ? https : http
  const maxBytes = opts.maxBytes ?? 10 * 1024 * 1024
  return new Promise((resolve, reject) => {
    const req = mod.request(url, {
      method: opts.method ?? 'GET',
      headers: opts.headers as any,
      lookup: guardedLookup(opts) as any,
      agent: false,
    })
    let settled = false
    // The deadline is checked after the event loop's next poll: in a process starved of CPU the
    // timer and the answer come due in the same loop turn, timers first, and an answer already
    // in the socket must not be thrown away as a timeout (the target acted on the request; a
    // forward counted as failed is sent again). docs/redis.md, "Forwarding under overload".
    const timer = setTimeout(
      () => setImmediate(() => settled || req.destroy(new OutboundError('timeout', `no complete answer within ${opts.timeoutMs ?? 10_000} ms`))),
      opts.timeoutMs ?? 10_000,
    )
    req.on('response', (res) => {
      const declared = Number(res.headers['content-length'] ?? 0)
      if (declared > maxBytes) {
        req.destroy(new OutboundError('too_large', `response is larger than ${maxBytes} bytes`))
        return
      }
      const chunks: Buffer[] = []
      let size = 0
      res.on('data', (c: Buffer) => {
        size += c.length
        if (size > maxBytes) req.destroy(new OutboundError('too_large', `response is larger than ${maxBytes} bytes`))
        else chunks.push(c)
      })
      res.on('end', () => {
        settled = true
        clearTimeout(timer)
        const headers: Record<string, string> = {}
        for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) headers[k] = Array.isArray(v) ? v.join(', ') : v
        resolve({ status: res.statusCode ?? 0, headers, rawHeaders: res.rawHeaders, body: Buffer.concat(chunks), url: url.href })
      })
      res.on('error', () => undefined)
    })
    req.on('error', (err) => {
      settled = true
      clearTimeout(timer)
      reject(err instanceof OutboundError ? err : new OutboundError('network', err.message))
    })
    req.end(opts.body)
  })
}

/** Fetch with the guard applied to the first URL and to every redirect target. */
export async function safeFetch(rawUrl: string, opts: SafeFetchOptions): Promise<SafeResponse> {
  let url = checkUrlShape(rawUrl)
  const maxRedirects = opts.maxRedirects ?? 0
  for (let i = 0; ; i++) {
    const res = await once(url, opts)
    const loc = res.headers.location
    if (res.status >= 300 && res.status < 400 && loc && maxRedirects > 0) {
      if (i >= maxRedirects) throw new OutboundError('redirects', `more than ${maxRedirects} redirects`)
      url = checkUrlShape(new URL(loc, url).href)
      // A redirect turns the request into a plain GET, as browsers do for 301/302/303.
      opts = { ...opts, method: 'GET', body: undefined }
      continue
    }
    return res
  }
}
