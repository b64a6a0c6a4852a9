// Plain HTTP calls against a running service, returning status, headers and parsed body.
import assert from 'node:assert/strict'
export interface Res {
  status: number
  headers: Headers
  body: Buffer
  json: any
  text: string
}

export async function call(
  method: string,
  url: string,
  opts: { json?: unknown; raw?: string | Buffer; key?: string; headers?: Record<string, string> } = {},
): Promise<Res> {
  const headers: Record<string, string> = { ...opts.headers }
  let body: string | Buffer | undefined
  if (opts.json !== undefined) {
    headers['content-type'] ??= 'application/json'
    body = JSON.stringify(opts.json)
  } else if (opts.raw !== undefined) {
    headers['content-type'] ??= 'application/json'
    body = opts.raw
  }
  if (opts.key) headers.authorization = `Bearer ${opts.key}`
  const r = await fetch(url, { method, headers, body: body as BodyInit | undefined })
  const buf = Buffer.from(await r.arrayBuffer())
  const text = buf.toString('utf8')
  let json: any
  try {
    json = JSON.parse(text)
  } catch {
    json = undefined
  }
  return { status: r.status, headers: r.headers, body: buf, json, text }
}

export const post = (url: string, json?: unknown, opts: { key?: string; headers?: Record<string, string> } = {}) => call('POST', url, { ...opts, json })
export const get = (url: string, opts: { key?: string; headers?: Record<string, string> } = {}) => call('GET', url, opts)

/**
 * The error answer every service gives: `status` with a JSON `{"error": string}` (matching
 * `message` when given). `exact` also requires a JSON content type and no field but `error`.
 */
export function assertJsonError(res: Res, status: number, message?: string | RegExp, opts: { exact?: boolean } = {}): void {
  assert.equal(res.status, status, res.text)
  if (opts.exact) {
    assert.match(res.headers.get('content-type') ?? '', /application\/json/)
    assert.deepEqual(Object.keys(res.json), ['error'])
  }
  assert.equal(typeof res.json?.error, 'string', res.text)
  if (typeof message === 'string') assert.equal(res.json.error, message)
  else if (message) assert.match(res.json.error, message)
}
