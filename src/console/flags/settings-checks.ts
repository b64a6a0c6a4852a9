// The API's checks of project settings, copied for the console's forms (the console imports no
// server code): environment names (src/flags/environment-routes.ts), origins of the CORS
// allow-list (src/platform/http/origins.ts, used by allowedOriginsSchema) and the shape of a
// webhook URL (checkUrlShape in src/platform/outbound/safe-fetch.ts). test/console-flags-settings.test.ts
// fails when a copy accepts what the API refuses, or the reverse.

export const ENVIRONMENT_NAME_RE = /^[a-z0-9][a-z0-9_-]{0,31}$/
export const ENVIRONMENT_NAME_HINT = '1–32 lower-case letters, digits, "_" or "-", starting with a letter or digit'

/** Why the API would refuse `name` as an environment name, or null. */
export const environmentNameProblem = (name: string): string | null => (ENVIRONMENT_NAME_RE.test(name) ? null : ENVIRONMENT_NAME_HINT)

export const ORIGIN_HINT = 'an origin such as https://app.example.com (scheme://host[:port], no path, query or wildcard)'
const OTHER_SCHEME = /^([a-z][a-z0-9+.-]*):\/\/([a-z0-9.-]+)(:\d{1,5})?$/

/** The origin the API stores for `input` (what a browser sends), or undefined when it is not exactly an origin. */
export function originOf(input: string): string | undefined {
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
    const bare = s.replace(/\/$/, '')
    if (url.username || url.password || url.search || url.hash || url.pathname !== '/' || bare.includes('/', scheme.length + 3)) return undefined
    if (!url.hostname) return undefined
    return url.origin
  }
  if (scheme === undefined || ['file', 'data', 'blob', 'javascript', 'about'].includes(scheme)) return undefined
  return OTHER_SCHEME.test(s) ? s : undefined
}

/** Why the API would refuse `raw` as a webhook URL by its shape, or null (whether it may be a private address is the service's to say). */
export function webhookUrlProblem(raw: string): string | null {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    return 'A full URL such as https://ci.example.com/flag-changes'
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'An http or https URL'
  if (url.username || url.password) return 'A URL without a user name or password'
  if (!url.hostname) return 'A URL with a host'
  if (raw.length > 2048) return 'At most 2,048 characters'
  return null
}

/** The events a change webhook can listen for (FLAG_EVENT_TYPES of the API). */
export const WEBHOOK_EVENTS = ['flag.created', 'flag.updated', 'flag.deleted', 'segment.created', 'segment.updated', 'segment.deleted']
