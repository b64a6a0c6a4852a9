// Which one process exports a system-wide gauge. Queue depth and age are global state in Redis:
// if every replica exported them, a Prometheus sum over targets would count them once per replica.
// Every candidate process tries to take a short Redis lease (SET NX PX) and the holder renews it;
// only the holder exports. A holder that dies stops renewing and another process takes over within
// the lease time; a holder that is alive keeps it, so exporters do not alternate.
import { randomBytes } from 'node:crypto'
import { hostname } from 'node:os'
import { logger } from '../logger.ts'
import type { Platform } from '../platform.ts'

// Extend only a lease that is still ours (a plain PEXPIRE could extend a successor's).
const RENEW = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end`

export class ExportLease {
  private readonly me = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`
  private heldUntil = 0
  private timer: NodeJS.Timeout | null = null

  constructor(
    private readonly platform: Platform,
    private readonly key: string,
    private readonly ttlMs: number,
  ) {}

  /** True while this process holds the lease (as of its last successful take or renewal). */
  held(): boolean {
    return Date.now() < this.heldUntil
  }

  /** Try to take or renew now; then keep doing so every third of the lease time. */
  start(): Promise<void> {
    if (this.timer) return Promise.resolve()
    this.timer = setInterval(() => void this.tick(), Math.max(100, Math.floor(this.ttlMs / 3)))
    this.timer.unref()
    // The platform's connection ends when the platform closes: stop with it.
    this.platform.redis.once('end', () => this.stop())
    return this.tick()
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer)
    this.timer = null
    this.heldUntil = 0
  }

  private async tick(): Promise<void> {
    const started = Date.now()
    try {
      const taken = (await this.platform.redis.set(this.key, this.me, 'PX', this.ttlMs, 'NX')) === 'OK'
      const renewed = taken || Number(await this.platform.redis.eval(RENEW, 1, this.key, this.me, this.ttlMs)) === 1
      // Counted from before the command: never believe the lease outlives Redis's own expiry.
      this.heldUntil = renewed ? started + this.ttlMs : 0
    } catch (err) {
      // Redis unreachable: not the exporter (and nothing to export) until it answers again.
      this.heldUntil = 0
      logger.debug({ key: this.key, err: String(err) }, 'export lease unavailable')
    }
  }
}

const leases = new WeakMap<Platform, Map<string, ExportLease>>()

/** The platform's lease for `name` (one per platform and name, started on first use). */
export function exportLease(platform: Platform, name: string): ExportLease {
  let byName = leases.get(platform)
  if (!byName) leases.set(platform, (byName = new Map()))
  let lease = byName.get(name)
  if (!lease) {
    lease = new ExportLease(platform, `${platform.config.QUEUE_PREFIX}:ops:export-lease:${name}`, platform.config.QUEUE_SIGNAL_LEASE_MS)
    byName.set(name, lease)
    void lease.start()
  }
  return lease
}
