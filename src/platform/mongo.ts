// MongoDB: the source of truth. Each domain declares its indexes; they are created at start.
import { MongoClient, MongoServerError, type Db, type IndexDescription } from 'mongodb'

export type IndexSpec = { collection: string; indexes: IndexDescription[] }

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
    if (spec.indexes.length) await db.collection(spec.collection).createIndexes(spec.indexes)
  }
}

export function isDuplicateKey(err: unknown): boolean {
  return err instanceof MongoServerError && err.code === 11000
}
