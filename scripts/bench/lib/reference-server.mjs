// @ts-check
// The HTTP reference of the benchmarks, in a process of its own like the measured service: a bare
// Koa app that reads the request body the way the measured route does and answers the fixed text
// given in QW_REF_ANSWER (the size of the measured route's answer). Listens on
// 127.0.0.1:QW_REF_PORT (0: a free port) and prints "listening <url>". Plain JavaScript so that it
// starts quickly on a loaded machine. What it does with a body (docs/benchmarks.md, "How the
// benchmarks measure"):
//   QW_REF_BODY=json (default)  parses it as JSON, as the flag and invoice routes do;
//   QW_REF_BODY=raw             keeps the bytes as they came and their lower-cased text, as the
//                               capture route stores a body and its search text (kept in memory,
//                               the last 1,000: a bare server's "store");
//   QW_REF_FORWARD=<url>        after answering, POSTs the body to <url> with the request's
//                               x-bench-id header: what a forwarder without queue or storage does;
//   GET …/stream                an event stream; a POST to /hook/<token>[/…] is written to the
//                               streams of …/endpoints/<token>/stream as a `capture` event whose
//                               data carries the body as text, as the live stream does.
//   QW_REF_PROBE=1              observes its own event loop and GC (loop-probe.mjs); each SIGUSR2
//                               prints "probe <json>" with what was seen since the last one.
import Koa from 'koa'
import { startLoopProbe } from './loop-probe.mjs'

const answer = process.env.QW_REF_ANSWER ?? '{"ok":true}'
const raw = process.env.QW_REF_BODY === 'raw'
const forwardTo = process.env.QW_REF_FORWARD
/** @type {Map<string, Set<import('node:http').ServerResponse>>} */
const streams = new Map()
/** @type {Array<{ body: Buffer, text: string }>} */
const kept = []
let events = 0

const app = new Koa()
// A body that does not parse is answered 500 by Koa; the reference's log stays quiet.
app.silent = true
app.use(async (ctx) => {
  const stream = /\/endpoints\/([^/]+)\/stream$/.exec(ctx.path)
  if (ctx.method === 'GET' && stream) {
    const token = stream[1] ?? ''
    ctx.respond = false
    ctx.res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store' })
    ctx.res.write('retry: 2000\n\n')
    const set = streams.get(token) ?? streams.set(token, new Set()).get(token)
    set?.add(ctx.res)
    ctx.req.on('close', () => set?.delete(ctx.res))
    return
  }
  if (ctx.method === 'POST') {
    const chunks = []
    for await (const c of ctx.req) chunks.push(c)
    const body = Buffer.concat(chunks)
    if (raw) {
      kept.push({ body, text: body.toString('utf8').toLowerCase() })
      if (kept.length > 1000) kept.shift()
    } else JSON.parse(body.toString('utf8'))
    const hook = /^\/hook\/([^/]+)/.exec(ctx.path)
    const listening = hook && streams.get(hook[1] ?? '')
    if (listening?.size) {
      const frame = `id: ${++events}\nevent: capture\ndata: ${JSON.stringify({ id: events, method: ctx.method, path: ctx.path, body: body.toString('utf8') })}\n\n`
      for (const s of listening) s.write(frame)
    }
    if (forwardTo) {
      const id = ctx.get('x-bench-id')
      // After the answer, as a forwarder acknowledges first; a failed forward is the target's to notice.
      ctx.res.once('finish', () => {
        fetch(forwardTo, { method: 'POST', headers: { 'content-type': ctx.get('content-type') || 'application/octet-stream', 'x-bench-id': id }, body }).then(
          (r) => r.arrayBuffer(),
          () => undefined,
        )
      })
    }
  }
  ctx.type = 'application/json'
  ctx.body = answer
})
const server = app.listen(Number(process.env.QW_REF_PORT ?? 0), '127.0.0.1', () => {
  const address = server.address()
  process.stdout.write(`listening http://127.0.0.1:${address && typeof address === 'object' ? address.port : 0}\n`)
})
if (process.env.QW_REF_PROBE) {
  const probe = startLoopProbe()
  process.on('SIGUSR2', () => process.stdout.write(`probe ${JSON.stringify(probe.take())}\n`))
}
process.once('SIGTERM', () => {
  for (const set of streams.values()) for (const s of set) s.destroy()
  server.close(() => process.exit(0))
})
