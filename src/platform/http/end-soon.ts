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
let pending: Array<ServerResponse | string> = []

function flush(): void {
  // An answer queued while these are ended (by a listener of one of them) goes in the next turn.
  const batch = pending
  pending = []
  for (let i = 0; i < batch.length; i += 2) {
    try {
      ;(batch[i] as ServerResponse).end(batch[i + 1] as string)
    } catch (err) {
      // One broken response must not keep the others of its turn from being written.
      logger.warn({ err: String(err) }, 'answer could not be written')
    }
  }
}

/** res.end(body) once the current event-loop turn's other work is done; the head is written already or by end(). */
export function endSoon(res: ServerResponse, body: string): void {
  if (pending.length === 0) setImmediate(flush)
  pending.push(res, body)
}
