// Requests Node's HTTP parser refuses before any route sees them (a body that ends short of its
// Content-Length, bytes past it that do not form a next request, oversized headers) are answered
// like every other error: JSON `{"error": "..."}`, instead of Node's bare "400 Bad Request".
// The connection then closes gracefully: our side half-closes after the answer and what the client
// is still sending is read and dropped for a while. Destroying it at once would discard unread
// bytes, which makes the kernel send a reset, and a client still sending (fetch streams its body
// while the answer arrives) then loses the answer it had not read yet.
import type { Server } from 'node:http'
import type { Socket } from 'node:net'

const ANSWERS: Record<string, [status: number, reason: string, message: string]> = {
  HPE_INVALID_EOF_STATE: [400, 'Bad Request', 'Request body is shorter than its Content-Length: the connection ended first'],
  HPE_HEADER_OVERFLOW: [431, 'Request Header Fields Too Large', 'Request headers too large'],
  HPE_CHUNK_EXTENSIONS_OVERFLOW: [413, 'Payload Too Large', 'Chunk extensions too large'],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'Request Timeout', 'Request timed out before it was complete'],
}
const MALFORMED: [number, string, string] = [
  400,
  'Bad Request',
  'Malformed HTTP request: not valid HTTP/1.1 (bytes sent past a Content-Length are read as the next request)',
]

/** How long a refused client may go on sending before its connection is cut. */
export const LINGER_MS = 5_000
/** And how much of it is read meanwhile. */
const LINGER_BYTES = 64 * 1024 * 1024

const lingering = new WeakSet<Socket>()

/** Half-close after the answer, drain what the client still sends, and cut it after LINGER_MS. */
export function closeGracefully(socket: Socket): void {
  lingering.add(socket)
  // Node's parser would go on reading the rest as HTTP and report each chunk as a new error.
  socket.removeAllListeners('data')
  let read = 0
  const cut = setTimeout(() => socket.destroy(), LINGER_MS)
  cut.unref()
  socket.once('close', () => clearTimeout(cut))
  socket.on('error', () => socket.destroy())
  socket.on('data', (chunk: Buffer) => {
    read += chunk.length
    if (read > LINGER_BYTES) socket.destroy()
  })
  socket.resume()
  socket.end()
}

export function answerClientErrorsAsJson(server: Server): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    if (lingering.has(socket)) return // answered already; the rest is being drained
    // As Node does by default: answer only when nothing of an answer was written yet.
    if (socket.writable && socket.bytesWritten === 0 && err.code !== 'ECONNRESET') {
      const [status, reason, message] = (err.code && ANSWERS[err.code]) || MALFORMED
      const body = JSON.stringify({ error: message })
      socket.write(
        `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\n` +
          `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      )
      closeGracefully(socket)
      return
    }
    socket.destroy(err)
  })
}
