// The periodic snapshot runs on a thread of its own: reading a large store (100 MB at 100,000
// captures), hashing and writing it are CPU bursts that do not belong on the event loop serving
// the APIs of `start` (with snapshots off, the captures' p99 in bench:embedded's last blocks was
// ~10 ms lower: docs/embedded-store.md), and here the read can be paced without holding anything
// else up. The thread has its own connection to the engine; the main thread asks it for one
// snapshot at a time (snapshot-client.ts).
import { parentPort, workerData } from 'node:worker_threads'
import { MongoClient } from 'mongodb'
import { collectionsToSave, reuseFrom, writeSnapshot } from './snapshot.ts'
import type { SnapshotReply, SnapshotRequest, SnapshotThreadData } from './snapshot-client.ts'

const { mongoUrl, database, known } = workerData as SnapshotThreadData
const client = new MongoClient(mongoUrl, { serverSelectionTimeoutMS: 5_000, maxPoolSize: 10 })
const db = client.db(database)

let pace = 1

parentPort!.on('message', async (req: SnapshotRequest) => {
  if ('hurry' in req) {
    pace = 1
    return
  }
  pace = req.pace
  let reply: SnapshotReply
  try {
    reply = { id: req.id, manifest: await writeSnapshot(db, await collectionsToSave(db, known), req.dir, () => pace, await reuseFrom(req.dir, req.clean)) }
  } catch (err) {
    reply = { id: req.id, error: err instanceof Error ? err.message : String(err) }
  }
  parentPort!.postMessage(reply)
})
