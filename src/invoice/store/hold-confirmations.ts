// Confirming a single invoice's quota hold without a MongoDB round trip of its own: the hold is
// confirmed by the same counter's next reservation (one update does both), or within
// CONFIRM_DELAY_MS when no other request of that account comes (docs/operations.md, "How a single
// invoice's hold is confirmed"). Deferring is safe because only a recorded invoice's hold is
// confirmed, and the sweep of stale holds (quota-holds.ts) confirms every recorded invoice's hold
// too: a process that dies with confirmations pending leaves them to the sweep.
import type { Db } from 'mongodb'
import { logger } from '../../platform/logger.ts'
import type { Platform } from '../../platform/platform.ts'
import { confirmHold, confirmHolds, reserveConfirming, type QuotaHold } from './quota-store.ts'

/** How long a recorded invoice's hold may wait for the next reservation of its counter. */
export const CONFIRM_DELAY_MS = 200
/** Holds confirmed by one update at most (keeps the update and its filter small). */
const MAX_PER_UPDATE = 64
/** Failed flushes (MongoDB unreachable) before the rest is left to the sweep. */
const MAX_FLUSH_FAILURES = 5

interface Pending {
  accountId: string
  period: string
  ids: string[]
}

export class HoldConfirmations {
  private readonly pending = new Map<string, Pending>()
  private timer: NodeJS.Timeout | undefined
  private failures = 0
  private closed = false

  constructor(
    private readonly db: Db,
    private readonly delayMs = CONFIRM_DELAY_MS,
  ) {}

  /** reserve() of one unit as a hold, confirming the counter's deferred holds in the same update. */
  async reserve(accountId: string, period: string, limit: number, hold: { id: string; kind: QuotaHold['kind'] }): Promise<boolean> {
    const key = `${accountId}:${period}`
    const p = this.pending.get(key)
    const confirm = p ? p.ids.splice(0, MAX_PER_UPDATE) : []
    if (p && !p.ids.length) this.pending.delete(key)
    let r: { reserved: boolean; confirmed: boolean }
    try {
      r = await reserveConfirming(this.db, accountId, period, limit, hold, confirm)
    } catch (err) {
      this.add(accountId, period, confirm)
      throw err
    }
    if (!r.confirmed && confirm.length) {
      this.add(accountId, period, confirm)
      // Reserved, so the units fitted: one of them is no longer held (the sweep confirmed it). One
      // by one now, or it would keep the others from riding along with the next reservations.
      if (r.reserved) void this.flush()
    }
    return r.reserved
  }

  /** The hold's invoice is recorded: confirm it with the next reservation, or soon. */
  later(accountId: string, period: string, holdId: string): void {
    this.add(accountId, period, [holdId])
  }

  private add(accountId: string, period: string, ids: string[]): void {
    if (!ids.length || this.closed) return
    const key = `${accountId}:${period}`
    let p = this.pending.get(key)
    if (!p) this.pending.set(key, (p = { accountId, period, ids: [] }))
    p.ids.push(...ids)
    if (!this.timer) {
      this.timer = setTimeout(() => void this.flush(), this.delayMs)
      this.timer.unref()
    }
  }

  /** Confirm everything deferred now. */
  async flush(): Promise<void> {
    clearTimeout(this.timer)
    this.timer = undefined
    const all = [...this.pending.values()]
    this.pending.clear()
    for (const p of all) {
      try {
        for (let i = 0; i < p.ids.length; i += MAX_PER_UPDATE) {
          const ids = p.ids.slice(i, i + MAX_PER_UPDATE)
          // All at once; if the sweep confirmed one meanwhile (it keeps recorded work charged), one by one.
          if (!(await confirmHolds(this.db, p.accountId, p.period, ids))) for (const id of ids) await confirmHold(this.db, p.accountId, p.period, id)
        }
        this.failures = 0
      } catch (err) {
        // Already confirmed ones are skipped when tried again (each must still be held).
        if (++this.failures <= MAX_FLUSH_FAILURES) this.add(p.accountId, p.period, p.ids)
        else logger.warn({ err, accountId: p.accountId, holds: p.ids.length }, 'quota hold confirmations left to the stale-hold sweep (MongoDB unreachable)')
      }
    }
  }

  /** Flush once more and stop deferring (the app is closing; what fails is the sweep's). */
  async close(): Promise<void> {
    this.closed = true
    await this.flush()
  }
}

const byPlatform = new WeakMap<Platform, HoldConfirmations>()

/** The process's deferred confirmations for this platform's database. */
export function holdConfirmations(platform: Platform): HoldConfirmations {
  let c = byPlatform.get(platform)
  if (!c) byPlatform.set(platform, (c = new HoldConfirmations(platform.db)))
  return c
}

/** Confirm what is pending as the invoice app closes; an app started again gets a new instance. */
export async function closeHoldConfirmations(platform: Platform): Promise<void> {
  const c = byPlatform.get(platform)
  byPlatform.delete(platform)
  await c?.close()
}
