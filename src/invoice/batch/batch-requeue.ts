// Re-enqueue unfinished batches, for when Redis lost its jobs (platform/queue/self-heal.ts): each
// processing batch gets its render chunks for rows still queued and its watcher back, and a
// finished batch whose callback is still owed gets that job. Job ids are the batch's and the
// chunks', so a batch whose jobs survived gets nothing new. Rows a lost job had taken
// ('rendering') are queued again by the watcher once their job is gone (batch-progress.ts).
import type { Platform } from '../../platform/platform.ts'
import { enqueue } from '../../platform/queue/job.ts'
import { enqueueRows } from './batch-progress.ts'
import { batches } from './batch-store.ts'
import { invoiceBatchCallbackContract, invoiceBatchWatchContract } from '../job-contracts.ts'

export async function requeueBatches(platform: Platform): Promise<number> {
  let n = 0
  for await (const b of batches(platform.db).find({ status: 'processing' }, { projection: { _id: 1 } })) {
    await enqueueRows(platform, b._id)
    await enqueue(platform, invoiceBatchWatchContract, { batch_id: b._id })
    n++
  }
  const owed = batches(platform.db).find({ status: 'finished', 'callback.enqueued': true, 'callback.state': 'pending' }, { projection: { _id: 1 } })
  for await (const b of owed) {
    await enqueue(platform, invoiceBatchCallbackContract, { batch_id: b._id })
    n++
  }
  return n
}
