// Group commit for a hot insert path: concurrent insertOne calls on one collection go out as one
// insertMany. Nothing waits on a timer: an insert that finds the line idle goes out at once, and
// those that arrive while a batch is in flight go out together when it returns. Each caller still
// learns the outcome of its own document (unordered insert, per-document write errors), so "stored
// before acknowledged" holds per request. Under load a capture then costs a share of one round trip
// instead of a whole one (and, on the embedded engine, a share of one collection copy).
import { MongoBulkWriteError, MongoServerError, type Collection, type Document, type OptionalUnlessRequiredId } from 'mongodb'

interface Pending<T> {
  doc: OptionalUnlessRequiredId<T>
  resolve(): void
  reject(err: unknown): void
}

export type GroupInsert<T> = (doc: OptionalUnlessRequiredId<T>) => Promise<void>

export function groupInserter<T extends Document>(collection: Collection<T>, maxBatch = 256): GroupInsert<T> {
  let waiting: Array<Pending<T>> = []
  let busy = false

  async function flush(): Promise<void> {
    busy = true
    while (waiting.length) {
      const batch = waiting.slice(0, maxBatch)
      waiting = waiting.slice(batch.length)
      const failed = new Map<number, unknown>()
      try {
        await collection.insertMany(
          batch.map((p) => p.doc),
          { ordered: false },
        )
      } catch (err) {
        const list = err instanceof MongoBulkWriteError && err.writeErrors ? [err.writeErrors].flat() : []
        // One document's error, as the MongoServerError an insertOne would have thrown.
        for (const e of list) failed.set(e.index, new MongoServerError({ message: e.errmsg ?? 'write error', code: e.code, errInfo: e.errInfo }))
        if (list.length === 0 && err instanceof MongoBulkWriteError && !err.writeConcernError && batch.length > 1) {
          // No per-document report: the embedded engine fails a whole unordered insert on one
          // duplicate (and stores none of it). Learn each document's own outcome one by one.
          await Promise.all(batch.map((p, i) => collection.insertOne(p.doc).catch((e: unknown) => failed.set(i, e))))
        } else if (list.length === 0) batch.forEach((_, i) => failed.set(i, err))
      }
      batch.forEach((p, i) => (failed.has(i) ? p.reject(failed.get(i)) : p.resolve()))
    }
    busy = false
  }

  return (doc) =>
    new Promise<void>((resolve, reject) => {
      waiting.push({ doc, resolve, reject })
      if (!busy) void flush()
    })
}
