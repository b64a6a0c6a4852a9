// The time a read of a received e-invoice may take (docs/einvoice-receiving.md): the
// PDF parser checks it between objects, the read between its steps, and the XSD check gets what is
// left. Past it the answer is a 503 with Retry-After (the service is too busy), not a hang.
import { unavailable } from '../../platform/http/errors.ts'

/** A 10 MB document reads in a few seconds on a busy core; this leaves room for a saturated one. */
export const READ_DEADLINE_MS = 30_000

export class ReadDeadline {
  readonly at: number
  constructor(readonly ms = READ_DEADLINE_MS) {
    this.at = Date.now() + ms
  }

  left(): number {
    return this.at - Date.now()
  }

  /** Throws the 503 once the deadline has passed; `step` names where, for the message. */
  check(step: string): void {
    if (this.left() <= 0) throw unavailable(`The e-invoice could not be read within ${this.ms / 1000} s (${step}): the service is busy; please retry. This request was not counted.`, 5)
  }
}
