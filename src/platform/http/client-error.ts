// Requests Node's HTTP parser refuses before any route sees them (a body that ends short of its
// Content-Length, bytes past it that do not form a next request, oversized headers) are answered
// like every other error: JSON `{"error": "..."}`, instead of Node's bare "400 Bad Request".
// The connection then closes gracefully: our side half-closes after the answer and what the client
// is still sending is read and dropped for a while. Destroying it at once would discard unread
// bytes, which makes the kernel send a reset, and a client still sending (fetch streams its body
// while the answer arrives) then loses the answer it had not read yet.
// On a connection that has served requests already (keep-alive, pipelining) the answer comes in
// its turn: after the answers still owed to the complete requests before it, never ahead of them
// (the client would take it for one of theirs) and never left out because bytes were written on
// the socket before. None of this costs a request anything: it runs only on a parser error.
import type { IncomingMessage, Server, ServerResponse } from 'node:http'
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

/** Sockets whose refused request waits for the answers of the requests before it. */
const waiting = new WeakSet<Socket>()

const deferredEnds = new WeakMap<Socket, Socket['end']>()

/**
 * Node's server ends its side of a connection as soon as the client half-closes it (a client that
 * sent everything and then shut down its writing side). While answers are still owed on it, that
 * end waits, or neither they nor the refusal would reach the client.
 */
function deferEnd(socket: Socket): void {
  if (deferredEnds.has(socket)) return
  deferredEnds.set(socket, socket.end)
  socket.end = function deferredEnd(this: Socket) {
    return this
  } as Socket['end']
}

function undeferEnd(socket: Socket): void {
  const end = deferredEnds.get(socket)
  if (end === undefined) return
  deferredEnds.delete(socket)
  // The prototype's, unless the socket had one of its own.
  if (end === Object.getPrototypeOf(socket).end) delete (socket as { end?: unknown }).end
  else socket.end = end
}

/** The response Node is writing on a socket (its own `_httpMessage`: there is no public way to ask). */
function inFlight(socket: Socket): ServerResponse | null {
  return (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage ?? null
}

/** Whether the request whose body is being read was answered in full already (no response is in flight). */
function answeredEarly(socket: Socket): boolean {
  const req = (socket as Socket & { parser?: { incoming?: IncomingMessage | null } | null }).parser?.incoming
  return req != null && !req.complete
}

/**
 * Answers a refused request in its turn on its connection: after the answers of the complete
 * requests before it (a keep-alive connection's earlier requests, pipelined ones), then closes.
 */
function refuse(err: NodeJS.ErrnoException, socket: Socket): void {
  if (!socket.writable) {
    waiting.delete(socket)
    undeferEnd(socket)
    return void socket.destroy(err)
  }
  const res = inFlight(socket)
  if (res !== null && res.req.complete) {
    // The refused bytes come after a whole request whose answer is not out yet: it goes first, and
    // so do those queued behind it (Node hands the socket to the next one when this one finishes).
    // Until its 'finish' Node keeps it on the socket, even when all of it is written already.
    waiting.add(socket)
    deferEnd(socket)
    res.once('finish', () => {
      if (res.shouldKeepAlive) return refuse(err, socket)
      // That answer closed the connection (Connection: close, a drain): nothing may follow it.
      waiting.delete(socket)
      undeferEnd(socket)
      closeGracefully(socket)
    })
    return
  }
  if (waiting.delete(socket)) undeferEnd(socket)
  // The refused bytes are in the body of the request being read, and its route has answered it
  // before reading the whole body (a 413): once that answer is out, only the close is left.
  if (res !== null ? res.headersSent : answeredEarly(socket)) {
    if (res === null || res.writableEnded) closeGracefully(socket)
    else socket.destroy(err)
    return
  }
  const [status, reason, message] = (err.code && ANSWERS[err.code]) || MALFORMED
  const body = JSON.stringify({ error: message })
  socket.write(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  )
  closeGracefully(socket)
}

export function answerClientErrorsAsJson(server: Server): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    // Answered already, or to be: what the parser reports of the bytes after the first error is dropped.
    if (lingering.has(socket) || waiting.has(socket)) return
    if (err.code === 'ECONNRESET') return void socket.destroy(err)
    refuse(err, socket)
  })
}
