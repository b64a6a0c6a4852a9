// A console session as a browser holds it (the service's qw_console_<service> cookie and the CSRF token kept in
// memory), and calls of the management API made with it, for the flags-console-* tests.
import { call, type Res } from './http.ts'

export interface ConsoleSession {
  /** The Cookie header value: `qw_console_<service>=<id>`. */
  cookie: string
  csrf: string
  res: Res
}

let ips = 0
/** A fresh client address per call (the tests run with TRUST_PROXY), so no test meets another's sign-in budget. */
export const freshIp = () => `198.51.100.${(++ips % 250) + 1}`

export async function signIn(root: string, apiKey: string, headers: Record<string, string> = {}): Promise<ConsoleSession> {
  const res = await call('POST', `${root}/api/v1/console/session`, { json: { api_key: apiKey }, headers: { 'x-forwarded-for': freshIp(), ...headers } })
  if (res.status !== 200) throw new Error(`sign-in failed: ${res.status} ${res.text}`)
  const set = res.headers.get('set-cookie') ?? ''
  const [, name, id] = /^(qw_console_[a-z]+)=([^;]*)/.exec(set) ?? []
  if (!id) throw new Error(`no session cookie: ${set}`)
  return { cookie: `${name}=${id}`, csrf: res.json.csrf_token, res }
}

/** A request as the console makes it: the cookie, and the CSRF token unless `csrf: false` (or another token). */
export function withSession(
  s: ConsoleSession,
  method: string,
  url: string,
  opts: { json?: unknown; raw?: string; csrf?: string | false; headers?: Record<string, string> } = {},
): Promise<Res> {
  const headers: Record<string, string> = { cookie: s.cookie, ...opts.headers }
  if (opts.csrf !== false) headers['x-csrf-token'] = opts.csrf ?? s.csrf
  return call(method, url, { json: opts.json, raw: opts.raw, headers })
}
