// Graceful shutdown of HTTP servers: stop accepting, answer every request already received
// (bounded), close keep-alive connections as they go idle, then cut whatever is left.
import type { Server, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import { Server as NetServer } from 'node:net'

let draining = false

export function isDraining(): boolean {
  return draining
}

/** From now on /readyz answers 503, so load balancers and orchestrators stop routing here. */
export function startDraining(): void {
  draining = true
}

/**
 * How long a connection that has not had a request answered yet is left to deliver it. Its bytes
 * may sit unread in the kernel (accepted in the same turn as the signal) or its first request may
 * be half parsed: Node counts such a connection as idle, and closing it resets a request the
 * client had already sent.
 */
const FRESH_GRACE_MS = 1_000
const SWEEP_MS = 100

interface Connections {
  open: Set<Socket>
  /** Connections accepted so far: a drain watches it to know when the accept queue is empty. */
  accepted: number
}
const tracked = new WeakMap<Server, Connections>()

/** Keep the server's open connections known, so that a drain can tell fresh ones from idle ones. */
export function trackConnections(server: Server): void {
  const state: Connections = { open: new Set(), accepted: 0 }
  tracked.set(server, state)
  server.on('connection', (socket: Socket) => {
    state.accepted++
    state.open.add(socket)
    socket.once('close', () => state.open.delete(socket))
  })
}

/**
 * Answers given while draining end their connection (Connection: close), so that a keep-alive
 * client opens a new connection (to another replica) instead of racing our close with its next
 * request. Added when the drain starts: the request path pays nothing for it before.
 */
function closeAfterAnswer(_req: unknown, res: ServerResponse): void {
  if (!res.headersSent) res.setHeader('Connection', 'close')
}

/** The response a connection is working on (Node's own bookkeeping, as closeIdleConnections reads it). */
function pendingResponse(socket: Socket): ServerResponse | undefined {
  const res = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage
  return res && !res.writableFinished ? res : undefined
}

/** Resolves once every connection is closed; connections still busy after timeoutMs are cut. */
export function closeGracefully(server: Server, timeoutMs: number): Promise<void> {
  draining = true
  const state = tracked.get(server)
  return new Promise((resolve) => {
    const done = () => {
      clearInterval(sweep)
      clearTimeout(cut)
      resolve()
    }
    const cut = setTimeout(() => server.closeAllConnections(), timeoutMs)
    let sweep: NodeJS.Timeout | undefined
    if (!state) {
      // Not tracked: Node's own idea of idle (a connection whose request is not parsed yet counts).
      sweep = setInterval(() => server.closeIdleConnections(), SWEEP_MS)
      server.close(done)
      return
    }
    server.prependListener('request', closeAfterAnswer)
    const started = Date.now()
    // Connections the kernel had completed when the signal came wait in the accept queue, and
    // closing the listener resets them. Node accepts about one per event-loop turn, so the listener
    // stays open until a turn accepts none (the queue is empty), or FRESH_GRACE_MS at most.
    // net.Server's close then stops accepting and waits for the connections; http.Server's would
    // also close every "idle" connection at once, fresh ones with an unread request included.
    let seen = -1
    const closeWhenQueueEmpty = () => {
      if (state.accepted !== seen && Date.now() - started < FRESH_GRACE_MS) {
        seen = state.accepted
        setImmediate(closeWhenQueueEmpty)
      } else {
        NetServer.prototype.close.call(server, done)
      }
    }
    setImmediate(closeWhenQueueEmpty)
    const lastRead = new Map<Socket, number>()
    const sweepOnce = () => {
      const fresh = Date.now() - started < FRESH_GRACE_MS
      for (const socket of state.open) {
        const res = pendingResponse(socket)
        const read = socket.bytesRead
        const arriving = lastRead.get(socket) !== read
        lastRead.set(socket, read)
        if (res) {
          if (!res.headersSent) res.setHeader('Connection', 'close')
        } else if (socket.bytesWritten === 0) {
          // Nothing answered on it yet: its request may still be on its way in.
          if (!fresh && !arriving) socket.destroy()
        } else if (!arriving) {
          // Answered, and nothing new since the last look: an idle keep-alive connection.
          socket.destroy()
        }
      }
    }
    sweep = setInterval(sweepOnce, SWEEP_MS)
    sweepOnce()
  })
}
