// Per-flag usage, as Unleash SDKs report metrics: the provider counts its evaluations per flag and
// variant in memory and sends them in one batch per interval (POST /api/v1/flag-usage), so the
// service can show how often each flag is evaluated, and to which variant, across in-process and
// remote evaluations (docs/flags.md, "Per-flag usage"). A batch the service did not take is kept
// and merged into the next one; what the service refuses as malformed is dropped.

export interface UsageOptions {
  /** How often counts are sent; default 60 s. */
  flushIntervalMs?: number
}

interface Target {
  url: string
  serverKey: string
  requestTimeoutMs?: number
}

/** The most flags one batch reports (the service's limit); further flags wait for the next batch. */
export const MAX_FLAGS_PER_BATCH = 1_000

export class UsageReporter {
  private counts = new Map<string, Map<string, number>>()
  private since = new Date()
  private timer: NodeJS.Timeout | null = null
  private sending: Promise<void> | null = null

  constructor(
    private readonly target: Target,
    private readonly opts: UsageOptions,
  ) {}

  count(flag: string, variant: string): void {
    let m = this.counts.get(flag)
    if (m === undefined) this.counts.set(flag, (m = new Map()))
    m.set(variant, (m.get(variant) ?? 0) + 1)
  }

  start(): void {
    if (this.timer) return
    this.timer = setInterval(() => void this.flush(), this.opts.flushIntervalMs ?? 60_000)
    this.timer.unref()
  }

  /** Sends what was counted since the last batch; resolves once the service answered (or failed). */
  flush(): Promise<void> {
    if (this.sending) return this.sending.then(() => this.flush())
    if (this.counts.size === 0) return Promise.resolve()
    const batch = this.counts
    const since = this.since
    this.counts = new Map()
    this.since = new Date()
    const flags: Record<string, Record<string, number>> = {}
    const rest = new Map<string, Map<string, number>>()
    let n = 0
    for (const [flag, variants] of batch) {
      if (n++ >= MAX_FLAGS_PER_BATCH) rest.set(flag, variants)
      else flags[flag] = Object.fromEntries(variants)
    }
    this.mergeBack(rest)
    const body = JSON.stringify({ started_at: since.toISOString(), ended_at: new Date().toISOString(), flags })
    const p = (async () => {
      try {
        const res = await fetch(new URL('/api/v1/flag-usage', this.target.url), {
          method: 'POST',
          headers: { authorization: `Bearer ${this.target.serverKey}`, 'content-type': 'application/json' },
          body,
          signal: AbortSignal.timeout(this.target.requestTimeoutMs ?? 5_000),
        })
        await res.body?.cancel()
        // 5xx or a rate limit: keep the counts for the next batch. Other 4xx: the batch is at fault.
        if (res.status >= 500 || res.status === 429) this.mergeBack(batch, flags)
      } catch {
        this.mergeBack(batch, flags)
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

  private mergeBack(from: Map<string, Map<string, number>>, only?: Record<string, unknown>): void {
    for (const [flag, variants] of from) {
      if (only && !(flag in only)) continue
      for (const [v, k] of variants) {
        let m = this.counts.get(flag)
        if (m === undefined) this.counts.set(flag, (m = new Map()))
        m.set(v, (m.get(v) ?? 0) + k)
      }
    }
  }
}
