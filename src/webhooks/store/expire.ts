// Retention: captures past their expiry (received_at + the plan's retention, fixed at capture),
// endpoints past their lifetime (free plan: 7 days) with all their captures, replay results after
// an hour, day counters after a week and endpoints' capture counts of days before yesterday. Deletes in batches; safe to run any number of times.
import type { Db } from 'mongodb'
import { getAccount } from '../../platform/accounts.ts'
import { dayKey } from '../../platform/clock.ts'
import { captures, deleteCaptures, deleteEndpointCaptures } from './capture-store.ts'
import { effectiveExpiry, endpoints, pruneCaptureDays } from './endpoint-store.ts'
import { deleteForwardStats } from './forward-stats.ts'
import { pruneDayCounters, releaseEndpointSlot } from './limit-store.ts'
import { replays } from './replay-store.ts'

export interface ExpireReport {
  captures: number
  endpoints: number
  replays: number
  counters: number
}

export async function expireCaptures(db: Db, now: Date, batch = 500): Promise<ExpireReport> {
  const report: ExpireReport = { captures: 0, endpoints: 0, replays: 0, counters: 0 }
  // Every slot, in batches: each delete copies only its own slot on the embedded engine.
  await captures(db).eachSlot(async (coll) => {
    for (;;) {
      const docs = await coll.find({ expires_at: { $lte: now } }).limit(batch).toArray()
      if (!docs.length) break
      const deleted = await deleteCaptures(db, docs) // awaited before adding: slots run at once
      report.captures += deleted
      if (docs.length < batch) break
    }
  })
  const due = await endpoints(db).find({ expires_at: { $lte: now } }).limit(batch).toArray()
  for (const ep of due) {
    const account = await getAccount(db, ep.account_id)
    if (account && effectiveExpiry(ep, account) === null) {
      // The account moved to a plan without a lifetime limit: the endpoint stays.
      await endpoints(db).updateOne({ _id: ep._id }, { $set: { expires_at: null } })
      continue
    }
    const r = await endpoints(db).deleteOne({ _id: ep._id })
    if (r.deletedCount === 1) {
      report.endpoints++
      await releaseEndpointSlot(db, ep.account_id)
    }
    report.captures += await deleteEndpointCaptures(db, ep)
    await deleteForwardStats(db, ep._id)
  }
  report.replays = (await replays(db).deleteMany({ created_at: { $lte: new Date(now.getTime() - 3_600_000) } })).deletedCount
  report.counters = await pruneDayCounters(db, dayKey(new Date(now.getTime() - 7 * 86_400_000)))
  // An endpoint's captures per day: today's is what the overview shows, yesterday's is kept for a sender's late requests.
  await pruneCaptureDays(db, dayKey(new Date(now.getTime() - 86_400_000)))
  return report
}
