// Up to N local deliveries in flight (--concurrency), taken in the order captures were queued, and
// the resume mark moved only past a contiguous prefix of tried ones: with #1 and #3 tried and #2
// still in flight the mark stays at #1, so a crash re-sends #2 (and #3) instead of ever skipping
// #2 (docs/webhooks-tools.md, "`listen` CLI").
export class DeliveryPool<T extends { id: number }> {
  private readonly waiting: T[] = []
  /** Started and not yet passed by the mark, in start order, with whether each was tried. */
  private readonly started: { item: T; tried: boolean }[] = []
  private running = 0

  constructor(
    private readonly limit: number,
    /** Delivers one item and calls `tried` once the local target was tried (before reporting the
     * result, which keeps the slot but must not hold the mark back). */
    private readonly work: (item: T, tried: () => void) => Promise<void>,
    /** Called with the last id of the tried prefix each time the prefix grows. */
    private readonly onPrefix: (id: number) => void,
  ) {}

  /** Queues an item; a capture a filter skips goes through here too (its work returns at once),
   * so the mark passes it in order. */
  add(item: T) {
    this.waiting.push(item)
    this.pump()
  }

  private pump() {
    while (this.running < this.limit && this.waiting.length) {
      const item = this.waiting.shift()!
      const entry = { item, tried: false }
      this.started.push(entry)
      this.running++
      const tried = () => {
        if (entry.tried) return
        entry.tried = true
        let last: number | null = null
        while (this.started[0]?.tried) last = this.started.shift()!.item.id
        if (last !== null) this.onPrefix(last)
      }
      this.work(item, tried)
        .catch(() => undefined) // the work reports its own failures
        .finally(() => {
          tried() // a delivery that failed before reaching the target (its body unreadable) is passed, as before
          this.running--
          this.pump()
        })
    }
  }
}
