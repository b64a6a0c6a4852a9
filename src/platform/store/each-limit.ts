// A bounded pool for independent async work over many small collections (restoring a snapshot's
// slots, creating their indexes): enough in flight to keep the store busy, not hundreds at once.

/** Run `fn` over `items`, at most `limit` at a time; the first failure fails the whole. */
export async function eachLimit<T>(items: T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) await fn(items[next++]!)
    }),
  )
}
