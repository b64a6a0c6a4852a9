// The claim on one forward attempt: written to MongoDB before the request is sent, so a second run
// of the same attempt — BullMQ re-runs a job whose lock expired while it was still working, which a
// starved event loop causes (docs/redis.md, "Forwarding under overload") — waits for the
// first run's record instead of sending again. The claim is a lease: a run that died holding it
// is taken over once the lease has run out (forward timeout + margin), so a crash still delivers
// (at least once). The claim is removed once the attempt is recorded; the record is the truth.
import { randomUUID } from 'node:crypto'
import type { Db } from 'mongodb'
import type { Config } from '../../platform/config.ts'
import { isDuplicateKey } from '../../platform/store/mongo.ts'
import { attemptCollection, type AttemptDoc } from '../store/capture-store.ts'

export interface ForwardClaimDoc {
  _id: string // the attempt's key: <endpoint>.<request>.<round>.<attempt>
  owner: string
  at: Date
  /** Real time after which another run may take the attempt over. */
  until: Date
}

// Holds only attempts in flight (and those of runs that died), so it stays small: one plain
// collection, not a partitioned one.
export const forwardClaims = (db: Db) => db.collection<ForwardClaimDoc>('webhook_forward_claims')

/**
 * How long a claim holds: longer than any attempt can take (the forward timeout) plus a margin for
 * a starved process that is late to notice its own timeout (WEBHOOK_FORWARD_LEASE_MS).
 */
export function forwardLeaseMs(config: Config): number {
  return config.WEBHOOK_FORWARD_LEASE_MS ?? config.WEBHOOK_FORWARD_TIMEOUT_MS + 20_000
}

// Leases count real time, as the forward timeout they bound does (never the test clock).
const realNow = () => Date.now()

/** Take the claim if nobody holds it or its lease ran out; the owner token, or null. */
export async function tryClaim(db: Db, key: string, leaseMs: number): Promise<string | null> {
  const owner = randomUUID()
  const now = realNow()
  const doc = { owner, at: new Date(now), until: new Date(now + leaseMs) }
  try {
    await forwardClaims(db).insertOne({ _id: key, ...doc })
    return owner
  } catch (err) {
    if (!isDuplicateKey(err)) throw err
  }
  const took = await forwardClaims(db).updateOne({ _id: key, until: { $lte: new Date(now) } }, { $set: doc })
  return took.modifiedCount === 1 ? owner : null
}

export async function releaseClaim(db: Db, key: string, owner: string): Promise<void> {
  await forwardClaims(db).deleteOne({ _id: key, owner })
}

/**
 * Wait until this run may send attempt `key` (its claim taken: `{ owner }`) or another run has
 * recorded it (`{ done }`). Bounded by the holder's lease: after it, the claim is ours.
 */
export async function claimOrAwait(
  db: Db,
  ref: { endpoint_id: string; request_id: number },
  key: string,
  leaseMs: number,
  pollMs = 250,
): Promise<{ owner: string } | { done: AttemptDoc }> {
  for (;;) {
    const done = await attemptCollection(db, ref.endpoint_id, ref.request_id).findOne({ _id: key })
    if (done) return { done }
    const owner = await tryClaim(db, key, leaseMs)
    if (owner) {
      // The holder may have recorded the attempt and released its claim between our two reads.
      const late = await attemptCollection(db, ref.endpoint_id, ref.request_id).findOne({ _id: key })
      if (!late) return { owner }
      await releaseClaim(db, key, owner)
      return { done: late }
    }
    await new Promise((r) => setTimeout(r, pollMs))
  }
}
