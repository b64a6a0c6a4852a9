// @ts-check
// The HTTP reference of the benchmarks, in a process of its own like the measured service: a bare
// Koa app that reads and parses the JSON request body (as the measured route must) and answers
// the fixed JSON text given in QW_REF_ANSWER (the size of the measured route's answer). Listens
// on 127.0.0.1:QW_REF_PORT (0: a free port) and prints "listening <url>". Plain JavaScript so
// that it starts quickly on a loaded machine.
import Koa from 'koa'

const answer = process.env.QW_REF_ANSWER ?? '{"ok":true}'
const app = new Koa()
// A body that does not parse is answered 500 by Koa; the reference's log stays quiet.
app.silent = true
app.use(async (ctx) => {
  if (ctx.method === 'POST') {
    const chunks = []
    for await (const c of ctx.req) chunks.push(c)
    JSON.parse(Buffer.concat(chunks).toString('utf8'))
  }
  ctx.type = 'application/json'
  ctx.body = answer
})
const server = app.listen(Number(process.env.QW_REF_PORT ?? 0), '127.0.0.1', () => {
  const address = server.address()
  process.stdout.write(`listening http://127.0.0.1:${address && typeof address === 'object' ? address.port : 0}\n`)
})
process.once('SIGTERM', () => server.close(() => process.exit(0)))
