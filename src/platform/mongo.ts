// MongoDB: the source of truth. Each domain declares its indexes; they are created at start.
import { MongoClient, MongoServerError, type Db, type IndexDescription } from 'mongodb'
import { physicalNames } from './partitioned.ts'

export type IndexSpec = {
  collection: string
  indexes: IndexDescription[]
  /** A growing collection spread over this many slots on the embedded engine (partitioned.ts); 1 on MongoDB. */
  partitions?: number
}

export async function connectMongo(url: string, dbName: string): Promise<{ client: MongoClient; db: Db }> {
  const client = new MongoClient(url, {
    serverSelectionTimeoutMS: 5_000,
    connectTimeoutMS: 5_000,
    maxPoolSize: 50,
  })
  await client.connect()
  return { client, db: client.db(dbName) }
}

export async function ensureIndexes(db: Db, specs: IndexSpec[]): Promise<void> {
  for (const spec of specs) {
    if (!spec.indexes.length) continue
    for (const name of physicalNames(db, spec.collection)) await db.collection(name).createIndexes(spec.indexes)
  }
}

export function isDuplicateKey(err: unknown): boolean {
  return err instanceof MongoServerError && err.code === 11000
}
