// The flags-stream benchmark's reference: a bare node:http server doing the same fan-out with no
// framework, authentication, Redis or database — it holds every GET as an event stream and, on
// POST /fire, writes one event to all of them. Run as its own process so its RSS is its own.
import { createServer, type ServerResponse } from 'node:http'

const streams = new Set<ServerResponse>()
let n = 0
const server = createServer((req, res) => {
  if (req.method === 'POST' && req.url === '/fire') {
    const frame = `id: ${++n}\nevent: message\ndata: {"type":"refetchEvaluation","etag":"${n}"}\n\n`
    for (const s of streams) s.write(frame)
    res.end(String(streams.size))
    return
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store' })
  res.write('retry: 2000\n\n')
  streams.add(res)
  req.on('close', () => streams.delete(res))
})
server.listen(Number(process.env.PORT), '127.0.0.1', () => process.send?.('ready'))
