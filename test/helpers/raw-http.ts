// HTTP/1.1 over a bare TCP socket, for tests that must control what fetch decides for us: the
// exact header order and casing, a Content-Length that lies, a body cut short by a half-close,
// requests pipelined or sent one after another on a connection kept open.
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

/**
 * One connection kept open across requests (keep-alive, pipelining), its answers read one by one
 * (Content-Length or chunked), and how the server ended it: a FIN or a reset, and what came after
 * the last answer.
 */
export class RawConnection {
  private buf = Buffer.alloc(0)
  private finReceived = false
  private resetReceived = false
  private closed = false
  private wake: () => void = () => {}

  private constructor(private readonly socket: net.Socket) {
    socket.on('data', (c: Buffer) => {
      this.buf = Buffer.concat([this.buf, c])
      this.wake()
    })
    socket.on('end', () => {
      this.finReceived = true
      socket.end()
      this.wake()
    })
    socket.on('error', (e: NodeJS.ErrnoException) => {
      if (e.code === 'ECONNRESET' || e.code === 'EPIPE') this.resetReceived = true
      this.wake()
    })
    socket.on('close', () => {
      this.closed = true
      this.wake()
    })
  }

  static open(url: string): Promise<RawConnection> {
    const { hostname, port } = new URL(url)
    return new Promise((resolve, reject) => {
      const s = net.connect({ host: hostname, port: Number(port), allowHalfOpen: true })
      s.once('connect', () => resolve(new RawConnection(s)))
      s.once('error', reject)
    })
  }

  write(bytes: string | Buffer): void {
    this.socket.write(typeof bytes === 'string' ? Buffer.from(bytes, 'latin1') : bytes)
  }

  private until(ready: () => boolean): Promise<void> {
    return new Promise((resolve) => {
      const check = () => {
        if (ready() || this.closed) {
          this.wake = () => {}
          resolve()
        }
      }
      this.wake = check
      check()
    })
  }

  /** The next whole answer (Content-Length or chunked), taken off what was received. */
  async answer(): Promise<RawAnswer> {
    let parsed: { answer: RawAnswer; used: number } | null = null
    await this.until(() => (parsed = parseAnswer(this.buf)) !== null)
    if (!parsed) {
      const how = this.resetReceived ? 'a reset' : this.finReceived ? 'a close' : 'its end'
      throw new Error(`the connection came to ${how} before an answer; received ${JSON.stringify(this.buf.toString('latin1'))}`)
    }
    const { answer, used } = parsed as { answer: RawAnswer; used: number }
    this.buf = this.buf.subarray(used)
    return answer
  }

  /** Waits for the server to end the connection: whether it closed with a FIN (no reset) and what came after the last answer. */
  async end(): Promise<{ fin: boolean; reset: boolean; rest: string }> {
    await this.until(() => this.finReceived)
    return { fin: this.finReceived, reset: this.resetReceived, rest: this.buf.toString('latin1') }
  }

  /** Ends our side (a client with nothing more to send); the server's answers are still read. */
  halfClose(): void {
    this.socket.end()
  }

  destroy(): void {
    this.socket.destroy()
  }
}

function parseAnswer(buf: Buffer): { answer: RawAnswer; used: number } | null {
  const end = buf.indexOf('\r\n\r\n')
  if (end < 0) return null
  const lines = buf.subarray(0, end).toString('latin1').split('\r\n')
  const status = Number(/^HTTP\/1\.1 (\d{3}) /.exec(lines[0]!)?.[1] ?? NaN)
  const headers: Record<string, string> = {}
  for (const l of lines.slice(1)) {
    const i = l.indexOf(':')
    headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim()
  }
  let at = end + 4
  if (headers['transfer-encoding'] === 'chunked') {
    const parts: Buffer[] = []
    for (;;) {
      const eol = buf.indexOf('\r\n', at)
      if (eol < 0) return null
      const size = parseInt(buf.subarray(at, eol).toString('latin1'), 16)
      if (buf.length < eol + 2 + size + 2) return null
      parts.push(buf.subarray(eol + 2, eol + 2 + size))
      at = eol + 2 + size + 2
      if (size === 0) return { answer: { status, headers, body: Buffer.concat(parts) }, used: at }
    }
  }
  const length = Number(headers['content-length'] ?? 0)
  if (buf.length < at + length) return null
  return { answer: { status, headers, body: buf.subarray(at, at + length) }, used: at + length }
}
