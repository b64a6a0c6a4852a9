// Shared helpers of the webhook-capture tests: accounts (paid plans set directly in MongoDB),
// endpoints, raw captures, and real local HTTP targets that record what they receive.
import http, { type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { findAccountByKey, setPlan } from '../../src/platform/accounts.ts'
import type { Plan } from '../../src/platform/plans.ts'
import type { TestSystem } from './system.ts'
import { call, post } from './http.ts'

let n = 0
export async function signup(sys: TestSystem, plan: Plan = 'free'): Promise<string> {
  const r = await post(`${sys.url.webhooks}/api/v1/signup`, { email: `user${++n}-${Date.now()}@example.com` })
  if (r.status !== 201) throw new Error(`signup failed: ${r.status} ${r.text}`)
  if (plan !== 'free') {
    const acc = await findAccountByKey(sys.platform.db, 'webhooks', r.json.api_key)
    await setPlan(sys.platform.db, acc!._id, plan)
  }
  return r.json.api_key
}

export async function createEndpoint(sys: TestSystem, key: string, body: Record<string, unknown> = {}): Promise<any> {
  const r = await post(`${sys.url.webhooks}/api/v1/endpoints`, body, { key })
  if (r.status !== 201) throw new Error(`create endpoint failed: ${r.status} ${r.text}`)
  return r.json
}

/** Send raw bytes to a capture URL with exactly the given headers. */
export async function capture(url: string, opts: { method?: string; body?: Buffer | string; headers?: Record<string, string> } = {}) {
  return call(opts.method ?? 'POST', url, { raw: opts.body, headers: { 'content-type': 'application/octet-stream', ...opts.headers } })
}

export const api = (sys: TestSystem, path: string) => `${sys.url.webhooks}/api/v1${path}`

export interface Received {
  method: string
  url: string
  rawHeaders: string[]
  headers: http.IncomingHttpHeaders
  body: Buffer
}

export interface Target {
  url: string
  received: Received[]
  close(): Promise<void>
}

/** A real HTTP server on 127.0.0.1 that records requests; `reply` decides each answer. */
export async function startTarget(reply: (r: Received, i: number, res: ServerResponse) => void = (_r, _i, res) => res.end('ok')): Promise<Target> {
  const received: Received[] = []
  const server = http.createServer((req: IncomingMessage, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c) => chunks.push(c))
    req.on('end', () => {
      const r = { method: req.method!, url: req.url!, rawHeaders: req.rawHeaders, headers: req.headers, body: Buffer.concat(chunks) }
      received.push(r)
      reply(r, received.length - 1, res)
    })
  })
  server.listen(0, '127.0.0.1')
  await new Promise((r) => server.once('listening', r))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections()
        server.close(() => r())
      }),
  }
}

export async function waitFor<T>(fn: () => Promise<T | undefined | null | false> | T | undefined | null | false, timeoutMs = 20_000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const v = await fn()
    if (v) return v as T
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}
