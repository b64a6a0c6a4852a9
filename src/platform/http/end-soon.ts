// Answers finished together at the end of the event-loop turn instead of one by one as they are
// built. A write to a socket whose reader is asleep wakes that reader, and on a loaded server the
// wake-up is much of a small answer's cost: on loopback, and on virtual machines, it is an
// interprocessor interrupt charged to the writing process. Written back to back, the answers of
// one turn wake a sleeping peer once; the flag evaluation answer's server CPU fell by about a fifth
// (docs/benchmarks.md). An answer waits at most for the rest of the turn it was built in, which
// the next request in line waits for anyway.
import type { ServerResponse } from 'node:http'
import { logger } from '../logger.ts'

// Flat pairs (response, body): no object per answer.
const pending: Array<ServerResponse | string> = []

function flush(): void {
  const n = pending.length
  for (let i = 0; i < n; i += 2) {
    try {
      ;(pending[i] as ServerResponse).end(pending[i + 1] as string)
    } catch (err) {
      // One broken response must not keep the others of its turn from being written.
      logger.warn({ err: String(err) }, 'answer could not be written')
    }
  }
  pending.length = 0
}

/** res.end(body) once the current event-loop turn's other work is done; the head is written already or by end(). */
export function endSoon(res: ServerResponse, body: string): void {
  if (pending.length === 0) setImmediate(flush)
  pending.push(res, body)
}
