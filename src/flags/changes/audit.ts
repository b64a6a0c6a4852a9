// Recording a change in the audit history in the same logical operation as the change itself:
// the entry is written first (pending, with the state before), then the change is made, then the
// entry is committed with the state after and the diff, and a change that webhooks hear of is
// handed to the dispatch job through the outbox. A change that is refused removes its entry; one
// that changes nothing records nothing. If the process dies, or the store fails, between the
// change and the commit, the history sweep settles the entry from the stored state (settlePending).
import type { Context } from 'koa'
import { createPatch } from 'rfc6902'
import { accountOf, keyHintOf } from '../../platform/http/auth.ts'
import { logger } from '../../platform/logger.ts'
import { enqueueDurably } from '../../platform/queue/outbox.ts'
import type { Platform } from '../../platform/platform.ts'
import { environmentOfChange, EVENT_KINDS, readState, sameState, type ChangeKind } from './change-state.ts'
import { commitEntry, dropPending, insertPending, type Actor, type HistoryDoc } from './history-store.ts'
import { flagChangeDispatchContract } from '../job-contracts.ts'
import { getProject } from '../store/project-store.ts'

/** Who made the request: the account and the API key (an id and a hint, never the key itself), by key or console session. */
export function actorOf(ctx: Context): Actor {
  const account = accountOf(ctx)
  // A console session's request carries no key: the session recorded the hint of the one it was made with.
  return { account_id: account._id, api_key: { id: account.key_hash.slice(0, 16), hint: keyHintOf(ctx) } }
}

export interface ChangeTarget {
  project_id: string
  kind: ChangeKind
  target: string
}

/** `flag.created`, `segment.deleted`, `sdk_key.rotated`… from the states before and after. */
export function changeType(kind: ChangeKind, before: unknown, after: unknown): string {
  if (kind === 'sdk_key') {
    // A server key that was there and is not any more was revoked; any other key change is a rotation.
    const had = (s: unknown) => typeof s === 'object' && s !== null && 'server_key_hint' in s
    return had(before) && !had(after) ? 'sdk_key.revoked' : 'sdk_key.rotated'
  }
  return `${kind}.${before === null ? 'created' : after === null ? 'deleted' : 'updated'}`
}

/**
 * Run `apply` recorded in the project's history. `after` maps apply's result to the resource's
 * new state: undefined = the change did not happen (refused, not found), null = it is gone.
 * A project the caller does not own is not recorded (apply answers its 404).
 */
export async function recordChange<T>(
  platform: Platform,
  ctx: Context,
  t: ChangeTarget,
  apply: () => Promise<T>,
  after: (result: T) => unknown,
): Promise<T> {
  const { db } = platform
  const actor = actorOf(ctx)
  const project = await getProject(db, actor.account_id, t.project_id)
  if (!project) return apply()
  const before = await readState(db, project, t.kind, t.target)
  const entry = await insertPending(db, { project_id: project._id, account_id: actor.account_id, kind: t.kind, target: t.target, actor, before })
  // If apply throws (a lost connection, a timeout), the change may or may not be stored: the
  // entry stays pending and the sweep settles it from what is stored.
  const result = await apply()
  const state = after(result)
  if (state === undefined || sameState(before, state)) {
    await dropPending(db, entry)
    return result
  }
  await commit(platform, entry, state, false)
  return result
}

/** Commit an entry with its state after, and hand a webhook-worthy change to the dispatch job. */
async function commit(platform: Platform, entry: HistoryDoc, after: unknown, bySweep: boolean): Promise<void> {
  const changes = createPatch(entry.before ?? {}, after ?? {})
  const type = changeType(entry.kind, entry.before, after)
  const environment = entry.kind === 'sdk_key' || entry.kind === 'environment' ? entry.target : environmentOfChange(entry.kind, type, changes.map((c) => c.path))
  const sent = EVENT_KINDS.includes(entry.kind)
  const committed = await commitEntry(platform.db, entry, {
    type,
    environment,
    after,
    changes,
    dispatch: sent ? 'pending' : undefined,
    settled_by_sweep: bySweep || undefined,
  })
  if (!committed || !sent) return
  // The entry is the source of truth: if this enqueue is lost too, the sweep dispatches entries
  // still marked `dispatch: pending`.
  await enqueueDurably(platform, flagChangeDispatchContract, { change_id: entry._id, project_id: entry.project_id }).catch((err) =>
    logger.warn({ change: entry._id, err: String(err) }, 'change dispatch not enqueued; the history sweep will'),
  )
}

/**
 * Settle an entry whose request died after writing it: the change happened if the stored state
 * now differs from the state before (then it is committed with the current state as after),
 * else it did not and the entry is removed. A later change of the same resource made before the
 * sweep would be credited to this entry too: the sweep waits a minute, so that needs a request
 * that died mid-change and another change of the same resource within that minute.
 */
export async function settlePending(platform: Platform, entry: HistoryDoc): Promise<'committed' | 'dropped'> {
  const { db } = platform
  const project = await getProject(db, entry.account_id, entry.project_id)
  const now = project ? await readState(db, project, entry.kind, entry.target) : null
  if (!project || sameState(entry.before, now)) {
    await dropPending(db, entry)
    return 'dropped'
  }
  await commit(platform, entry, now, true)
  return 'committed'
}
