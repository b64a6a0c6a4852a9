// Requests Node's HTTP parser refuses before any route sees them (a body that ends short of its
// Content-Length, bytes past it that do not form a next request, oversized headers) are answered
// like every other error: JSON `{"error": "..."}`, instead of Node's bare "400 Bad Request".
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

export function answerClientErrorsAsJson(server: Server): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    // As Node does by default: answer only when nothing of an answer was written yet.
    if (socket.writable && socket.bytesWritten === 0 && err.code !== 'ECONNRESET') {
      const [status, reason, message] = (err.code && ANSWERS[err.code]) || MALFORMED
      const body = JSON.stringify({ error: message })
      socket.write(
        `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\n` +
          `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      )
    }
    socket.destroy(err)
  })
}
