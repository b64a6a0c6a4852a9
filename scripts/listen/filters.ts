// Which captures `listen` delivers: --filter-path, --filter-method and --filter-headers
// (docs/webhooks-tools.md, "`listen` CLI"). Each kind of filter narrows (AND); the values of one kind
// widen (OR), except headers, where every given header must match. A capture that fails one is
// skipped: not sent to the local target, but counted and passed by the resume mark.
import { minimatch } from 'minimatch'

export interface CaptureHead {
  method: string
  /** The sub-path after /hook/<token>, "/" for the endpoint itself. */
  subPath: string
  raw_headers: string[]
}

export interface Filters {
  paths: { source: string; test(subPath: string): boolean }[]
  methods: Set<string>
  headers: { source: string; name: string; value: RegExp | null }[]
}

export class FilterError extends Error {}

/** A path filter: `re:<regex>` is a JavaScript regular expression searched in the sub-path;
 * anything else is a glob matched against the whole sub-path (`*` within a segment, `**` across). */
export function pathFilter(source: string): Filters['paths'][number] {
  if (source.startsWith('re:')) {
    let re: RegExp
    try {
      re = new RegExp(source.slice(3))
    } catch (err) {
      throw new FilterError(`--filter-path ${JSON.stringify(source)} is not a valid regular expression: ${(err as Error).message}`)
    }
    return { source, test: (p) => re.test(p) }
  }
  if (!source.startsWith('/') && !source.startsWith('*')) {
    throw new FilterError(`--filter-path must be a glob starting with / (such as /github/**) or re:<regex> (got ${JSON.stringify(source)})`)
  }
  // dot: a sub-path segment starting with "." is still a path a sender may call.
  return { source, test: (p) => minimatch(p, source, { dot: true, nocomment: true, nonegate: true }) }
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/

export function methodFilter(values: string[]): Set<string> {
  const out = new Set<string>()
  for (const v of values.flatMap((s) => s.split(','))) {
    const m = v.trim().toUpperCase()
    if (!TOKEN.test(m)) throw new FilterError(`--filter-method takes methods such as POST or PUT,PATCH (got ${JSON.stringify(v)})`)
    out.add(m)
  }
  return out
}

/** `Name` (present), `Name: value` (equal), `Name: *part*` (`*` stands for any characters). */
export function headerFilter(source: string): Filters['headers'][number] {
  const colon = source.indexOf(':')
  const name = (colon < 0 ? source : source.slice(0, colon)).trim()
  if (!TOKEN.test(name)) throw new FilterError(`--filter-headers takes 'Name' or 'Name: value' (got ${JSON.stringify(source)})`)
  if (colon < 0) return { source, name: name.toLowerCase(), value: null }
  const wanted = source.slice(colon + 1).trim()
  const pattern = wanted.split('*').map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('.*')
  return { source, name: name.toLowerCase(), value: new RegExp(`^${pattern}$`, 's') }
}

/** Null when the capture passes every filter, else the filter it failed (for the skipped line). */
export function rejectedBy(f: Filters, c: CaptureHead): string | null {
  if (f.methods.size && !f.methods.has(c.method.toUpperCase())) return `--filter-method ${[...f.methods].join(',')}`
  if (f.paths.length && !f.paths.some((p) => p.test(c.subPath))) return `--filter-path ${f.paths.map((p) => p.source).join(' | ')}`
  for (const h of f.headers) {
    // Repeated headers are read joined with ", ", as the service stores and searches them.
    const values: string[] = []
    for (let i = 0; i + 1 < c.raw_headers.length; i += 2) if (c.raw_headers[i]!.toLowerCase() === h.name) values.push(c.raw_headers[i + 1]!)
    if (!values.length || (h.value && !h.value.test(values.join(', ')))) return `--filter-headers '${h.source}'`
  }
  return null
}

export const noFilters = (f: Filters) => !f.paths.length && !f.methods.size && !f.headers.length
