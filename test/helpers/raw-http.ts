// HTTP/1.1 over a bare TCP socket, for tests that must control what fetch decides for us: the
// exact header order and casing, a Content-Length that lies, a body cut short by a half-close.
import net from 'node:net'

export interface RawAnswer {
  status: number
  /** Response header names lower-cased (the last value wins). */
  headers: Record<string, string>
  body: Buffer
}

/**
 * Send `head` (request line and header lines, without the blank line) and `body` to `url`'s host
 * and port, then read one answer. `halfClose` ends our side of the connection after the body (a
 * client that has nothing more to send); otherwise the socket stays open until the answer is in.
 */
export function rawRequest(url: string, head: string[], body: Buffer | string = '', opts: { halfClose?: boolean } = {}): Promise<RawAnswer> {
  const { hostname, port } = new URL(url)
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: hostname, port: Number(port), allowHalfOpen: true })
    let buf = Buffer.alloc(0)
    let settled = false
    const done = (err: Error | null, answer?: RawAnswer) => {
      if (settled) return
      settled = true
      socket.destroy()
      if (err) reject(err)
      else resolve(answer!)
    }
    const tryParse = (ended: boolean) => {
      const end = buf.indexOf('\r\n\r\n')
      if (end < 0) return ended && done(new Error(`connection closed before an answer: ${JSON.stringify(buf.toString('latin1'))}`))
      const lines = buf.subarray(0, end).toString('latin1').split('\r\n')
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(lines[0]!)?.[1])
      // An interim 100 Continue is followed by the real answer.
      if (status === 100) {
        buf = buf.subarray(end + 4)
        return tryParse(ended)
      }
      const headers: Record<string, string> = {}
      for (const l of lines.slice(1)) {
        const i = l.indexOf(':')
        headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim()
      }
      const rest = buf.subarray(end + 4)
      const length = headers['content-length'] !== undefined ? Number(headers['content-length']) : null
      if (length !== null && rest.length >= length) return done(null, { status, headers, body: rest.subarray(0, length) })
      if (ended) done(null, { status, headers, body: rest })
    }
    socket.on('data', (c: Buffer) => {
      buf = Buffer.concat([buf, c])
      tryParse(false)
    })
    socket.on('end', () => tryParse(true))
    socket.on('close', () => tryParse(true))
    socket.on('error', (err) => done(err))
    socket.on('connect', () => {
      socket.write(Buffer.concat([Buffer.from(head.join('\r\n') + '\r\n\r\n', 'latin1'), Buffer.from(body)]))
      if (opts.halfClose) socket.end()
    })
  })
}
