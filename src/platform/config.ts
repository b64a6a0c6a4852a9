// Environment parsed once, by one zod schema. Bad config fails at start naming the variable.
import { z } from 'zod'
import { normalizeOrigin, ORIGIN_HINT } from './http/origins.ts'
import { isClusterUrl, parseRedisTarget } from './redis/redis-target.ts'

const bool = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'])
  .transform((v) => v === 'true' || v === '1' || v === 'yes')

const port = z.coerce.number().int().min(0).max(65535)
const ms = z.coerce.number().int().min(1)

const schema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  HOST: z.string().default('127.0.0.1'),
  INVOICE_PORT: port.default(3001),
  FLAGS_PORT: port.default(3002),
  WEBHOOKS_PORT: port.default(3003),
  /** Public base addresses, used in URLs the services hand out (capture URLs, checkout return pages). */
  INVOICE_PUBLIC_URL: z.url().optional(),
  FLAGS_PUBLIC_URL: z.url().optional(),
  WEBHOOKS_PUBLIC_URL: z.url().optional(),
  /** Unset → a private redis-server child process is started. One server, a cluster or a Sentinel set (redis-target.ts). */
  REDIS_URL: z
    .string()
    .superRefine((v, ctx) => {
      try {
        parseRedisTarget(v)
      } catch (err) {
        ctx.addIssue({ code: 'custom', message: (err as Error).message })
      }
    })
    .optional(),
  /** Unset → the embedded in-memory MongoDB-compatible engine is started. */
  MONGO_URL: z.string().optional(),
  MONGO_DB: z.string().min(1).default('queueworks'),
  /** Slots of each partitioned collection, fixed when a database is first used (docs/embedded-store.md). Unset → each collection's default on the embedded engine, 1 on MongoDB. */
  STORE_PARTITIONS: z.coerce.number().int().min(1).max(1000).optional(),
  /** Data folder of the embedded engine's snapshots (`start` without MONGO_URL). */
  DATA_DIR: z.string().min(1).default('.queueworks-data'),
  /** `true` → the embedded engine keeps nothing (no snapshots read or written), like `start --ephemeral`. */
  EPHEMERAL: bool.default(false),
  /** `true` → a damaged write journal does not stop `start`: it starts without what the damage held, like `start --accept-journal-damage` (docs/embedded-store.md). */
  JOURNAL_ACCEPT_DAMAGE: bool.default(false),
  /** How often `start` snapshots the embedded engine while running (a crash loses at most this much). */
  SNAPSHOT_INTERVAL_MS: ms.default(60_000),
  /** Redis key prefix of every BullMQ queue (lets several deployments share one Redis). */
  QUEUE_PREFIX: z.string().min(1).default('qw'),
  /** Honour X-Forwarded-For (only behind a proxy you control). */
  TRUST_PROXY: bool.default(false),
  /** Allow outbound requests to loopback/private addresses. Defaults to true outside production. */
  OUTBOUND_ALLOW_PRIVATE: bool.optional(),
  /** How long an invoice request waits for its render job. */
  RENDER_TIMEOUT_MS: ms.default(30_000),
  /**
   * Admission control: a new single or demo invoice is refused (503 + Retry-After) when the render
   * queue's waiting jobs would take longer than this to start. Unset: half of RENDER_TIMEOUT_MS; 0: off.
   */
  RENDER_ADMIT_WAIT_MS: z.coerce.number().int().min(0).optional(),
  /** Days a stored invoice (single or batch row) is kept before the invoices-expire job removes it. */
  INVOICE_RETENTION_DAYS: z.coerce.number().int().min(1).max(3650).default(30),
  /** BullMQ lock duration; a job whose worker died is taken over within 1.5× this (docs/operations.md). */
  JOB_LOCK_MS: ms.default(8_000),
  /** Worker processes `start` spawns, and their render concurrency. */
  WORKER_PROCESSES: z.coerce.number().int().min(0).max(64).default(1),
  RENDER_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(2),
  /** Grace period for draining on SIGTERM. */
  SHUTDOWN_TIMEOUT_MS: ms.default(10_000),
  /** Unset (outside production) → `start` runs the embedded Stripe simulator (docs/billing.md). */
  STRIPE_SECRET_KEY: z.string().optional(),
  STRIPE_WEBHOOK_SECRET: z.string().optional(),
  /** Stripe API address; unset → https://api.stripe.com. Points at the simulator locally. */
  STRIPE_API_BASE: z.url({ protocol: /^https?$/ }).optional(),
  /** The embedded simulator's secret key and port (unset: a random key, a free port; both printed by `start`). */
  STRIPE_SIMULATOR_KEY: z.string().regex(/^sk_test_\w+$/, { error: 'must look like sk_test_…' }).optional(),
  STRIPE_SIMULATOR_PORT: port.optional(),
  /** Stripe price ids as JSON {"invoice":{"starter":"price_…"},…}; a missing one → inline price_data from plans.ts. */
  STRIPE_PRICE_IDS: z
    .string()
    .transform((s, ctx) => {
      try {
        return JSON.parse(s) as unknown
      } catch {
        ctx.addIssue({ code: 'custom', message: 'must be JSON' })
        return z.NEVER
      }
    })
    .pipe(z.partialRecord(z.enum(['invoice', 'flags', 'webhooks']), z.partialRecord(z.enum(['starter', 'pro', 'business']), z.string().min(1))))
    .optional(),
  /** Checkout sessions still open after this long are reconciled from Stripe by the sweep. */
  BILLING_SWEEP_AFTER_MS: ms.default(180_000),
  ADMIN_TOKEN: z.string().min(16).optional(),
  /**
   * Browser origins allowed to call the flags management API (comma-separated); unset → none: no
   * CORS headers there. The evaluation API answers CORS per project (docs/flags.md).
   */
  CORS_MANAGEMENT_ORIGINS: z
    .string()
    .transform((s, ctx) => {
      const out: string[] = []
      for (const entry of s.split(',').map((e) => e.trim()).filter(Boolean)) {
        const origin = normalizeOrigin(entry)
        if (!origin) {
          ctx.addIssue({ code: 'custom', message: `"${entry}" is not ${ORIGIN_HINT}` })
          return z.NEVER
        }
        out.push(origin)
      }
      return out
    })
    .default([]),
  /**
   * This process may export queue-depth gauges (one lease holder among those with it on does).
   * Unset: on in `start` (the whole system in one process tree), off in the api and worker roles.
   */
  QUEUE_METRICS: bool.optional(),
  /** Port of a worker process's /healthz, /readyz and /metrics (unset: no HTTP in workers). */
  WORKER_PORT: port.optional(),
  /** OTLP/HTTP collector base address; set → traces are exported (src/platform/tracing.ts), unset → tracing is off. */
  OTEL_EXPORTER_OTLP_ENDPOINT: z.url({ protocol: /^https?$/ }).optional(),
  /** Lease time of the one process exporting system-wide queue gauges; another takes over this long after it dies. */
  QUEUE_SIGNAL_LEASE_MS: z.coerce.number().int().min(1_000).default(15_000),
  /** Webhook forward schedule: delay before each attempt, ms (docs/webhooks.md, "Decisions where the spec is silent": now, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h). */
  WEBHOOK_FORWARD_SCHEDULE_MS: z
    .string()
    .regex(/^\d+(,\d+)*$/, { error: 'must be comma-separated integers (ms)' })
    .default('0,5000,300000,1800000,7200000,18000000,36000000'),
  /** A forward attempt succeeds on a 2xx within this long. */
  WEBHOOK_FORWARD_TIMEOUT_MS: ms.default(10_000),
  /**
   * Lease of a forward attempt's claim (src/webhooks/forward/forward-claim.ts): a re-run of the attempt
   * waits this long for the first run's record before sending itself. Unset → the forward timeout
   * + 20 s. Must exceed the timeout.
   */
  WEBHOOK_FORWARD_LEASE_MS: ms.optional(),
  /**
   * Key (32 bytes, base64) that seals stored signing secrets (flag-change webhooks) with AES-256-GCM
   * (src/platform/secret-box.ts). Unset: a random key kept in the database seals them.
   */
  SECRETS_KEY: z
    .string()
    .refine((s) => Buffer.from(s, 'base64').length === 32, { error: 'must be 32 bytes, base64-encoded (openssl rand -base64 32)' })
    .optional(),
  /** Comment lines on idle flag change streams (GET /ofrep/v1/stream) this often: at most 25 s, under the idle cut-off of common proxies (docs/flags.md, change stream). */
  FLAGS_STREAM_HEARTBEAT_MS: ms.max(25_000).default(20_000),
  /**
   * How often each flags API process adds its own evaluations to the per-flag usage counts
   * (docs/flags.md, per-flag usage). 60 s, as Unleash SDKs send metrics: every 5 s, one write per
   * flag on the embedded store took evaluate from ~0.97 to ~0.6 × a bare server (docs/benchmarks.md).
   */
  FLAGS_USAGE_FLUSH_MS: ms.min(100).max(300_000).default(60_000),
}).superRefine((c, ctx) => {
  // On a cluster each queue gets its own hash tag after the prefix (redis-target.ts): braces in
  // the prefix would override it, and a tag for everything puts every queue on one shard.
  if (c.REDIS_URL && isClusterUrl(c.REDIS_URL) && /[{}]/.test(c.QUEUE_PREFIX)) {
    ctx.addIssue({ code: 'custom', path: ['QUEUE_PREFIX'], message: 'must not contain { or } with a Redis Cluster (each queue gets its own hash tag)' })
  }
  // A lease shorter than an attempt may take would let a second run send while the first still waits.
  if (c.WEBHOOK_FORWARD_LEASE_MS !== undefined && c.WEBHOOK_FORWARD_LEASE_MS <= c.WEBHOOK_FORWARD_TIMEOUT_MS) {
    ctx.addIssue({ code: 'custom', path: ['WEBHOOK_FORWARD_LEASE_MS'], message: 'must be greater than WEBHOOK_FORWARD_TIMEOUT_MS' })
  }
})

export type Config = z.infer<typeof schema> & { outboundAllowPrivate: boolean }

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''))
  const parsed = schema.safeParse(present)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!
    throw new Error(`Invalid configuration: ${issue.path.join('.')}: ${issue.message}`)
  }
  const c = parsed.data
  return { ...c, outboundAllowPrivate: c.OUTBOUND_ALLOW_PRIVATE ?? c.NODE_ENV !== 'production' }
}
