// Graceful shutdown of HTTP servers: stop accepting, let in-flight requests finish (bounded),
// close keep-alive connections as they go idle, then cut whatever is left.
import type { Server } from 'node:http'

let draining = false

export function isDraining(): boolean {
  return draining
}

/** From now on /readyz answers 503, so load balancers and orchestrators stop routing here. */
export function startDraining(): void {
  draining = true
}

/** Resolves once every connection is closed; connections still busy after timeoutMs are cut. */
export function closeGracefully(server: Server, timeoutMs: number): Promise<void> {
  draining = true
  return new Promise((resolve) => {
    // A keep-alive connection goes idle right after its in-flight response; close it then, or
    // server.close() would wait for the client's keep-alive timeout.
    const sweep = setInterval(() => server.closeIdleConnections(), 100)
    const cut = setTimeout(() => server.closeAllConnections(), timeoutMs)
    server.close(() => {
      clearInterval(sweep)
      clearTimeout(cut)
      resolve()
    })
    server.closeIdleConnections()
  })
}
