// What REDIS_URL names: one server, a Redis Cluster (seed nodes) or a Sentinel set (sentinels +
// master name). Parsed here once, for the config check at start and for every connection built by
// redis.ts, so a URL either works everywhere or stops the process naming the variable.
//
//   redis://[user:pass@]host:port[/db]                         standalone (rediss:// for TLS)
//   redis+cluster://[user:pass@]h1:p1,h2:p2,...               cluster seed nodes (rediss+cluster://)
//   redis+sentinel://[:pass@]h1:p1,h2:p2/mastername[/db]      sentinels and the master's name
//                                                              (rediss+sentinel://; the password is
//                                                              the data nodes' and the sentinels')

export interface HostPort {
  host: string
  port: number
}

export type RedisTarget =
  | { kind: 'standalone'; url: string }
  | { kind: 'cluster'; nodes: HostPort[]; username?: string; password?: string; tls: boolean }
  | { kind: 'sentinel'; sentinels: HostPort[]; name: string; db: number; username?: string; password?: string; tls: boolean }

const SCHEME = /^([a-z+]+):\/\/(.*)$/i

/** Parse a REDIS_URL; throws an Error whose message says what is wrong (without the secret). */
export function parseRedisTarget(raw: string): RedisTarget {
  const m = SCHEME.exec(raw.trim())
  if (!m) throw new Error('must be a redis://, rediss://, redis+cluster:// or redis+sentinel:// URL')
  const scheme = m[1]!.toLowerCase()
  const rest = m[2]!
  if (scheme === 'redis' || scheme === 'rediss') {
    let u: URL
    try {
      u = new URL(raw.trim())
    } catch {
      throw new Error('is not a valid URL')
    }
    if (!u.hostname) throw new Error('has no host')
    if (u.hostname.includes(',')) throw new Error('names several hosts: use redis+cluster:// or redis+sentinel://')
    return { kind: 'standalone', url: raw.trim() }
  }
  const tls = scheme.startsWith('rediss+')
  const mode = scheme.replace(/^rediss?\+/, '')
  if (!/^rediss?\+(cluster|sentinel)$/.test(scheme)) throw new Error(`has an unknown scheme "${scheme}:"`)
  const at = rest.lastIndexOf('@')
  const auth = at >= 0 ? rest.slice(0, at) : ''
  const afterAuth = at >= 0 ? rest.slice(at + 1) : rest
  const slash = afterAuth.indexOf('/')
  const hostList = slash >= 0 ? afterAuth.slice(0, slash) : afterAuth
  const path = slash >= 0 ? afterAuth.slice(slash + 1) : ''
  const nodes = parseHosts(hostList, mode === 'sentinel' ? 26379 : 6379)
  const { username, password } = parseAuth(auth)
  if (mode === 'cluster') {
    if (path && path !== '') throw new Error('a cluster URL has no path (a cluster has only database 0)')
    return { kind: 'cluster', nodes, tls, ...(username ? { username } : {}), ...(password ? { password } : {}) }
  }
  const [name, dbText, ...extra] = path.split('/')
  if (!name) throw new Error('names no master: redis+sentinel://host:port[,host:port]/mastername')
  if (extra.length) throw new Error('has too many path parts: /mastername[/db]')
  const db = dbText === undefined || dbText === '' ? 0 : Number(dbText)
  if (!Number.isInteger(db) || db < 0) throw new Error('has a database number that is not a non-negative integer')
  return { kind: 'sentinel', sentinels: nodes, name: decodeURIComponent(name), db, tls, ...(username ? { username } : {}), ...(password ? { password } : {}) }
}

function parseHosts(list: string, defaultPort: number): HostPort[] {
  if (!list) throw new Error('names no host')
  return list.split(',').map((part) => {
    const m = /^(\[[^\]]+\]|[^:[\]]+)(?::(\d+))?$/.exec(part.trim())
    if (!m) throw new Error(`has a malformed host "${part}" (host:port)`)
    const port = m[2] === undefined ? defaultPort : Number(m[2])
    if (!(port > 0 && port < 65536)) throw new Error(`has a port out of range in "${part}"`)
    return { host: m[1]!.replace(/^\[|\]$/g, ''), port }
  })
}

function parseAuth(auth: string): { username?: string; password?: string } {
  if (!auth) return {}
  const colon = auth.indexOf(':')
  const dec = (s: string) => {
    try {
      return decodeURIComponent(s)
    } catch {
      throw new Error('has a badly escaped user or password')
    }
  }
  if (colon < 0) return { username: dec(auth) }
  const username = dec(auth.slice(0, colon))
  const password = dec(auth.slice(colon + 1))
  return { ...(username ? { username } : {}), ...(password ? { password } : {}) }
}

export function isClusterUrl(raw: string): boolean {
  return /^rediss?\+cluster:/i.test(raw.trim())
}

/**
 * The BullMQ prefix of one queue. On one server (or a Sentinel-managed one) it is QUEUE_PREFIX, as
 * always. On a cluster every key of a queue must hash to one slot (BullMQ's scripts touch several
 * of them at once) while different queues should land on different shards: each queue gets its
 * own hash tag, `<QUEUE_PREFIX>:{<queue>}`, so its keys read `qw:{invoice-render}:invoice-render:…`.
 */
export function queuePrefixFor(base: string, queue: string, cluster: boolean): string {
  return cluster ? `${base}:{${queue}}` : base
}
