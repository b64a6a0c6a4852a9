// Web origins as browsers send them in the Origin header (`scheme://host[:port]`), for CORS
// allow-lists written by people (a project's allowed_origins, CORS_MANAGEMENT_ORIGINS). An entry
// is normalised to the form a browser sends, so that matching is plain string equality.

export const ORIGIN_HINT = 'an origin such as https://app.example.com (scheme://host[:port], no path, query or wildcard)'

// Non-special schemes (capacitor://localhost, tauri://localhost, chrome-extension://<id>) are the
// origins of app webviews and extensions; WHATWG URL gives them the opaque origin "null", so they
// are checked by this pattern and kept as written (lower-cased).
const OTHER_SCHEME = /^([a-z][a-z0-9+.-]*):\/\/([a-z0-9.-]+)(:\d{1,5})?$/

/** The origin a browser would send for `input`, or undefined when `input` is not exactly an origin. */
export function normalizeOrigin(input: string): string | undefined {
  const s = input.trim().toLowerCase()
  if (s.length === 0 || s.length > 253 + 32 || /[*?#@\s\\]/.test(s)) return undefined
  const scheme = /^([a-z][a-z0-9+.-]*):/.exec(s)?.[1]
  if (scheme === 'http' || scheme === 'https') {
    let url: URL
    try {
      url = new URL(s)
    } catch {
      return undefined
    }
    // Anything beyond scheme://host[:port] (a path, query, fragment or credentials) is refused
    // rather than dropped: `https://app.example.com/login` is a page, not an origin.
    const bare = s.replace(/\/$/, '')
    if (url.username || url.password || url.search || url.hash || url.pathname !== '/' || bare.includes('/', scheme.length + 3)) return undefined
    if (!url.hostname) return undefined
    return url.origin
  }
  if (scheme === undefined || ['file', 'data', 'blob', 'javascript', 'about'].includes(scheme)) return undefined
  return OTHER_SCHEME.test(s) ? s : undefined
}
