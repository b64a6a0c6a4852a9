// Per-flag usage, as Unleash SDKs report metrics: the provider counts its evaluations per engine
// result (one flag and variant each: ServedEntry, kept by provider.ts per flag of the set in use) and this reporter sends
// them in one batch per interval (POST /api/v1/flag-usage), so the service can show how often each
// flag is evaluated, and to which variant, across in-process and remote evaluations
// (docs/flags-in-process.md, "Per-flag usage"). A batch the service did not take (network error, 5xx, 429)
// is kept and merged into the next one; one it refused as malformed (other 4xx) is dropped.

export interface UsageOptions {
  /** How often counts are sent; default 60 s. */
  flushIntervalMs?: number
}

/** What the provider keeps per engine result: its OpenFeature details and how often it was served. */
export interface ServedEntry {
  details: { value: unknown; variant: string; reason: string; flagMetadata: Readonly<Record<string, string | number | boolean>> }
  /** The value's JSON type, for the check against the caller's default (provider.ts). */
  type: number
  flag: string
  variant: string
  n: number
}

interface Target {
  url: string
  serverKey: string
  requestTimeoutMs?: number
}

/** The service's limits on one batch: flags, and the count of one variant. */
export const MAX_FLAGS_PER_BATCH = 1_000
export const MAX_COUNT = 1_000_000_000

type Counts = Map<string, Map<string, number>>

export class UsageReporter {
  /** Counts taken from the entries but not yet accepted by the service. */
  private pending: Counts = new Map()
  private timer: NodeJS.Timeout | null = null
  private sending: Promise<void> | null = null
  private since = new Date()

  constructor(
    private readonly target: Target,
    private readonly opts: UsageOptions,
    /** Every entry of the flag set in use (provider.ts keeps them). */
    private readonly entries: () => Iterable<ServedEntry>,
  ) {}

  start(): void {
    if (this.timer) return
    this.timer = setInterval(() => void this.flush(), this.opts.flushIntervalMs ?? 60_000)
    this.timer.unref()
  }

  /**
   * Moves the entries' counts into the pending batch. The provider calls it before it replaces
   * the flag set (and its entries), so counts of a replaced set go to the next batch.
   */
  drain(): void {
    for (const e of this.entries()) {
      if (e.n === 0) continue
      add(this.pending, e.flag, e.variant, e.n)
      e.n = 0
    }
  }

  /** Sends what was counted since the last batch; resolves once the service answered (or failed). */
  flush(): Promise<void> {
    if (this.sending) return this.sending.then(() => this.flush())
    this.drain()
    if (this.pending.size === 0) return Promise.resolve()
    const batch = this.pending
    this.pending = new Map()
    // Without a prototype: a flag or variant named "__proto__" (names the API accepts) is then an
    // own key that JSON.stringify writes, where `{}[name] = …` would set the object's prototype.
    const flags: Record<string, Record<string, number>> = Object.create(null)
    let n = 0
    for (const [flag, variants] of batch) {
      // Past the service's limits, the rest waits for the next batch.
      if (n++ >= MAX_FLAGS_PER_BATCH) {
        for (const [v, k] of variants) add(this.pending, flag, v, k)
        continue
      }
      const out: Record<string, number> = Object.create(null)
      for (const [v, k] of variants) {
        out[v] = Math.min(k, MAX_COUNT)
        if (k > MAX_COUNT) add(this.pending, flag, v, k - MAX_COUNT)
      }
      flags[flag] = out
    }
    const since = this.since
    this.since = new Date()
    const body = JSON.stringify({ started_at: since.toISOString(), ended_at: this.since.toISOString(), flags })
    const keep = () => {
      for (const [flag, variants] of Object.entries(flags)) for (const [v, k] of Object.entries(variants)) add(this.pending, flag, v, k)
    }
    const p = (async () => {
      try {
        const res = await fetch(new URL('/api/v1/flag-usage', this.target.url), {
          method: 'POST',
          headers: { authorization: `Bearer ${this.target.serverKey}`, 'content-type': 'application/json' },
          body,
          signal: AbortSignal.timeout(this.target.requestTimeoutMs ?? 5_000),
        })
        await res.body?.cancel()
        if (res.status >= 500 || res.status === 429) keep()
      } catch {
        keep()
      }
    })()
    this.sending = p.finally(() => {
      this.sending = null
    })
    return this.sending
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer)
    this.timer = null
    await this.flush()
  }
}

function add(c: Counts, flag: string, variant: string, n: number): void {
  let m = c.get(flag)
  if (m === undefined) c.set(flag, (m = new Map()))
  m.set(variant, (m.get(variant) ?? 0) + n)
}
