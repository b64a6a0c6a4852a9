// Newsletter subscribers: one document per e-mail; subscribing again changes nothing.
import type { Db } from 'mongodb'
import { clock } from '../../platform/clock.ts'
import { isDuplicateKey } from '../../platform/store/mongo.ts'

export async function subscribe(db: Db, email: string): Promise<void> {
  try {
    await db.collection<{ _id: string; created_at: Date }>('newsletter_subscribers').updateOne(
      { _id: email },
      { $setOnInsert: { created_at: clock.now() } },
      { upsert: true },
    )
  } catch (err) {
    if (!isDuplicateKey(err)) throw err
  }
}
