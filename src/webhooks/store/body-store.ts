// Where captured bodies live. Small bodies sit inline in the capture document (one write, one
// read); bodies over INLINE_MAX go to GridFS, because a MongoDB document is capped at 16 MB and
// captures may be 25 MiB. Either way the bytes come back exactly as received.
import { Binary, GridFSBucket, ObjectId, type Db } from 'mongodb'

export const INLINE_MAX = 1024 * 1024
const BUCKET = 'capture_bodies'

export type StoredBody = { body: Binary } | { body_file: ObjectId }

const bucket = (db: Db) => new GridFSBucket(db, { bucketName: BUCKET })

export async function putBody(db: Db, name: string, bytes: Buffer): Promise<StoredBody> {
  if (bytes.length <= INLINE_MAX) return { body: new Binary(bytes) }
  const id = new ObjectId()
  await new Promise<void>((resolve, reject) => {
    const up = bucket(db).openUploadStreamWithId(id, name)
    up.once('finish', () => resolve())
    up.once('error', reject)
    up.end(bytes)
  })
  return { body_file: id }
}

export function inlineBytes(b: Binary): Buffer {
  return Buffer.from(b.buffer.buffer, b.buffer.byteOffset, b.buffer.byteLength)
}

export async function getBody(db: Db, doc: { body?: Binary; body_file?: ObjectId }): Promise<Buffer> {
  if (doc.body) return inlineBytes(doc.body)
  if (!doc.body_file) return Buffer.alloc(0)
  const chunks: Buffer[] = []
  for await (const c of bucket(db).openDownloadStream(doc.body_file)) chunks.push(c as Buffer)
  return Buffer.concat(chunks)
}

export async function deleteBodyFiles(db: Db, ids: ObjectId[]): Promise<void> {
  for (const id of ids) {
    await bucket(db)
      .delete(id)
      .catch(() => undefined) // already gone: deleting is idempotent
  }
}
