// Replay results in MongoDB: the ingress writes the request, the capture-replay job writes the
// target's answer (or the reason there is none); the ingress reads it back from here.
import type { Binary, Db } from 'mongodb'
import type { IndexSpec } from '../../platform/store/mongo.ts'

export interface ReplayDoc {
  _id: string
  account_id: string
  endpoint_id: string
  request_id: number
  url: string
  created_at: Date
  state: 'pending' | 'done' | 'failed'
  result?: { status: number; headers: Record<string, string>; body: Binary }
  error?: { code: string; message: string }
}

export const replayIndexes: IndexSpec = { collection: 'webhook_replays', indexes: [{ key: { created_at: 1 }, name: 'created_at' }] }

export const replays = (db: Db) => db.collection<ReplayDoc>('webhook_replays')
