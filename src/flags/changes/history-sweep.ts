// The history sweep (job flag-history-sweep, every minute): settles entries whose request died
// between the change and its commit (audit.ts settlePending), dispatches committed changes whose
// dispatch was lost, and deletes history and delivery-log entries past the account's plan
// retention (plan-limits.ts). Visits every slot of the partitioned collections: a few dozen
// small queries.
import type { Db } from 'mongodb'
import { getAccount } from '../../platform/accounts.ts'
import type { Plan } from '../../platform/plans.ts'
import { clock } from '../../platform/clock.ts'
import { enqueue } from '../../platform/queue/job.ts'
import type { Partitioned } from '../../platform/store/partitioned.ts'
import type { Platform } from '../../platform/platform.ts'
import { settlePending } from './audit.ts'
import { deliveries } from './change-hook-delivery-store.ts'
import { history } from './history-store.ts'
import { flagChangeDispatchContract } from '../job-contracts.ts'
import { HISTORY_RETENTION_DAYS } from '../plan-limits.ts'

const DAY_MS = 86_400_000
/** A request is given this long to commit its entry before the sweep settles it. */
export const SETTLE_AFTER_MS = 60_000

export interface SweepResult {
  settled: number
  redispatched: number
  expired: number
}

export async function sweepHistory(platform: Platform, minAgeMs = SETTLE_AFTER_MS): Promise<SweepResult> {
  const { db } = platform
  const now = clock.nowMs()
  const cutoff = new Date(now - minAgeMs)
  const out: SweepResult = { settled: 0, redispatched: 0, expired: 0 }
  for (const slot of history(db).all()) {
    for (const e of await slot.find({ state: 'pending', at: { $lt: cutoff } }).limit(500).toArray()) {
      await settlePending(platform, e)
      out.settled++
    }
    for (const e of await slot.find({ state: 'committed', dispatch: 'pending', at: { $lt: cutoff } }).limit(500).toArray()) {
      // A fresh job id: the first job may have failed for good and still hold the change's id.
      await enqueue(platform, flagChangeDispatchContract, { change_id: e._id, project_id: e.project_id }, { jobId: `${e._id}-s${now}` })
      out.redispatched++
    }
  }
  out.expired += await expire(db, history(db), now)
  out.expired += await expire(db, deliveries(db), now)
  return out
}

/** Delete what is older than its account's plan allows. */
async function expire(db: Db, coll: Partitioned<any>, now: number): Promise<number> {
  const shortest = new Date(now - Math.min(...Object.values(HISTORY_RETENTION_DAYS)) * DAY_MS)
  const plans = new Map<string, Plan>()
  let n = 0
  for (const slot of coll.all()) {
    for (const accountId of (await slot.distinct('account_id', { at: { $lt: shortest } })) as string[]) {
      if (!plans.has(accountId)) plans.set(accountId, (await getAccount(db, accountId))?.plan ?? 'free')
      const keep = HISTORY_RETENTION_DAYS[plans.get(accountId)!] * DAY_MS
      n += (await slot.deleteMany({ account_id: accountId, at: { $lt: new Date(now - keep) } })).deletedCount
    }
  }
  return n
}
