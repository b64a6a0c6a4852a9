// Shared benchmark helpers: an autocannon run with a summary, and the reference every HTTP
// benchmark is compared with in the same run (a bare Koa app answering a small JSON body).
import autocannon from 'autocannon'
import Koa from 'koa'
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface LoadResult {
  rps: number
  p50: number
  p99: number
  errors: number
  non2xx: number
}

export async function load(opts: autocannon.Options): Promise<LoadResult> {
  const r = await autocannon({ connections: 50, duration: 10, ...opts })
  return {
    rps: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    errors: r.errors + r.timeouts,
    non2xx: r.non2xx,
  }
}

/** The reference: bare Koa, same machine, same run. `body` = a small JSON object, or a status. */
export async function startReference(body: unknown = { ok: true }): Promise<{ url: string; close(): Promise<void> }> {
  const app = new Koa()
  app.use((ctx) => {
    ctx.body = body
  })
  return serve(app)
}

/**
 * The floor of any Koa handler for a JSON POST: a bare Koa app that reads and parses the request
 * body and answers a fixed JSON text (pass the size of the real answer). What a service adds on top
 * of this is its own cost; the rest is HTTP, Koa and the load generator sharing the machine.
 */
export async function startJsonEcho(answer: string): Promise<{ url: string; close(): Promise<void> }> {
  const app = new Koa()
  app.use(async (ctx) => {
    const chunks: Buffer[] = []
    for await (const c of ctx.req) chunks.push(c as Buffer)
    JSON.parse(Buffer.concat(chunks).toString('utf8'))
    ctx.type = 'application/json'
    ctx.body = answer
  })
  return serve(app)
}

async function serve(app: Koa): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = app.listen(0, '127.0.0.1')
  await new Promise((r) => server.once('listening', r))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((r) => server.close(() => r(undefined))),
  }
}

export const fmt = (n: number, d = 1) => n.toLocaleString('en-US', { maximumFractionDigits: d })
