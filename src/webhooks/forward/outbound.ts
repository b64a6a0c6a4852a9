// Rebuilding a captured request for forward and replay: the raw header list in arrival order
// minus hop-by-hop headers, a Host and Content-Length for the new target, and the target URL
// with the captured sub-path and query appended — never above the target's own path.
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

/** A captured sub-path whose dot segments would reach above the base path it is appended to. */
export class SubPathEscapeError extends Error {
  constructor(subPath: string) {
    super(`the captured path ${JSON.stringify(subPath.slice(0, 200))} climbs above the target's path with dot segments (..); not sent`)
    this.name = 'SubPathEscapeError'
  }
}

/**
 * Whether `subPath` climbs above its own root when read the way any server on the way might read
 * it: percent-escapes of `.`, `/`, `\` and `%` decoded (any case, repeatedly, so a double-encoded
 * `%252e` counts too), backslashes taken as slashes, `;params` dropped from a segment (`..;`),
 * and empty segments not counted as a level (a server may collapse `//`). Stricter than WHATWG
 * URL on purpose: what one parser keeps as data another resolves.
 */
export function climbsAboveRoot(subPath: string): boolean {
  let depth = 0
  for (const seg of pathSegments(subPath)) {
    if (seg === '' || seg === '.') continue
    if (seg === '..') {
      if (--depth < 0) return true
    } else depth++
  }
  return false
}

/** Whether any segment of `subPath`, read as climbsAboveRoot reads it, is `.` or `..`. */
export const hasDotSegment = (subPath: string): boolean => pathSegments(subPath).some((seg) => seg === '.' || seg === '..')

/** The segments as a lenient server would see them: escapes of `.`, `/`, `\` and `%` decoded repeatedly, `\` as `/`, `;params` dropped. */
function pathSegments(subPath: string): string[] {
  let s = subPath
  for (let i = 0; i < 8; i++) {
    const next = s.replace(/%(2e|2f|5c|25)/gi, (m) => decodeURIComponent(m))
    if (next === s) break
    s = next
  }
  return s.replace(/\\/g, '/').split('/').map((raw) => raw.split(';')[0]!)
}

/**
 * forward_url + captured sub-path + captured query (merged with the forward URL's own query).
 * Throws SubPathEscapeError when the sub-path's dot segments would leave the base path: a hook
 * URL is public, and whoever can POST to it must not reach other paths of the forward host.
 */
export function targetUrl(base: string, subPath: string, query: string): string {
  const u = new URL(base)
  const basePath = u.pathname.replace(/\/+$/, '')
  if (subPath && subPath !== '/') {
    if (climbsAboveRoot(subPath)) throw new SubPathEscapeError(subPath)
    u.pathname = basePath + subPath
    // Defence in depth: whatever the URL parser made of it stays under the base path.
    if (u.pathname !== basePath && !u.pathname.startsWith(basePath + '/')) throw new SubPathEscapeError(subPath)
  }
  if (query) u.search = u.search ? `${u.search}&${query}` : `?${query}`
  return u.href
}
