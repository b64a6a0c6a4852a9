// Reads received e-invoices off the API's event loop: one thread per API process, started with the
// first read and ended when idle. The read deadline becomes a hard one here: a read still running
// when it has passed (a parse cannot check the clock midway) has its thread ended, and the client
// gets the same 503 as a read that saw the deadline itself.
import { Piscina } from 'piscina'
import { HttpError, unavailable } from '../../platform/http/errors.ts'
import type { ReadResult } from './read-einvoice.ts'
import { READ_DEADLINE_MS } from './read-deadline.ts'
import type { ReadAnswer, ReadTask } from './read-thread.ts'

let pool: Piscina | null = null

function readPool(): Piscina {
  pool ??= new Piscina({
    filename: new URL('./read-thread.ts', import.meta.url).href,
    minThreads: 0,
    // One: reads are rare next to everything else the API does, and a second would take the
    // other core from the API's requests exactly when a hostile document arrives.
    maxThreads: 1,
    idleTimeout: 30_000,
  })
  return pool
}

/**
 * Reads in the pool at once, running or waiting: past this many a read is refused (503) rather
 * than queued, so a burst cannot pile up request bodies in memory. Counted here: piscina's own
 * `maxQueue` does not apply to tasks given an abort signal (they wait in another queue), and
 * every read has one.
 */
export const MAX_READS = 1 + 32
let reads = 0

/** Grace past the deadline the thread checks itself, before its thread is ended from here. */
const HARD_STOP_GRACE_MS = 2_000

/** `hardStopMs`: when the thread is ended from here (tests set it apart from the deadline). */
export async function readInThread(
  body: Buffer,
  kind: 'xml' | 'pdf',
  { deadlineMs = READ_DEADLINE_MS, hardStopMs = deadlineMs + HARD_STOP_GRACE_MS, pdf }: { deadlineMs?: number; hardStopMs?: number; pdf?: ReadTask['pdf'] } = {},
): Promise<ReadResult & { pdf?: Buffer }> {
  const task: ReadTask = { body, kind, deadlineMs, ...(pdf ? { pdf } : {}) }
  if (reads >= MAX_READS) throw unavailable('Too many e-invoices are being read at once; please retry. This request was not counted.', 5)
  let answer: ReadAnswer
  reads++
  try {
    answer = await readPool().run(task, { signal: AbortSignal.timeout(hardStopMs) })
  } catch (err) {
    const name = (err as Error)?.name
    if (name === 'AbortError' || name === 'TimeoutError') {
      throw unavailable(`The e-invoice could not be read within ${Math.round(hardStopMs / 1000)} s: the service is busy; please retry. This request was not counted.`, 5)
    }
    throw err
  } finally {
    reads--
  }
  if ('error' in answer) throw new HttpError(answer.error.status, answer.error.message, answer.error.headers, answer.error.extra)
  return answer.pdf ? { ...answer.ok, pdf: Buffer.from(answer.pdf.buffer, answer.pdf.byteOffset, answer.pdf.byteLength) } : answer.ok
}

export async function closeReadPool(): Promise<void> {
  const p = pool
  pool = null
  await p?.destroy()
}
