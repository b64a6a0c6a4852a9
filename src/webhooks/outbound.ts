// Rebuilding a captured request for forward and replay: the raw header list in arrival order
// minus hop-by-hop headers, a Host and Content-Length for the new target, and the target URL
// with the captured sub-path and query appended.
const HOP_BY_HOP = new Set([
  'host',
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'content-length',
  'expect',
])

/** Raw header pairs ([name, value, ...]) ready to send to `target`. */
export function outboundHeaders(rawHeaders: string[], target: URL, bodyLength: number): string[] {
  const out: string[] = ['Host', target.host]
  let hadLength = false
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!
    const lower = name.toLowerCase()
    if (lower === 'content-length' || lower === 'transfer-encoding') hadLength = true
    if (HOP_BY_HOP.has(lower)) continue
    out.push(name, rawHeaders[i + 1]!)
  }
  // Node would otherwise chunk a body sent with an explicit header list.
  if (bodyLength > 0 || hadLength) out.push('Content-Length', String(bodyLength))
  return out
}

/** forward_url + captured sub-path + captured query (merged with the forward URL's own query). */
export function targetUrl(base: string, subPath: string, query: string): string {
  const u = new URL(base)
  if (subPath && subPath !== '/') u.pathname = u.pathname.replace(/\/+$/, '') + subPath
  if (query) u.search = u.search ? `${u.search}&${query}` : `?${query}`
  return u.href
}
