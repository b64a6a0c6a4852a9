// Every service the platform runs, and everything they need from MongoDB.
import { accountIndexes } from './platform/accounts.ts'
import type { IndexSpec } from './platform/mongo.ts'
import { outboxIndexes } from './platform/outbox.ts'
import { billingIndexes } from './platform/billing/billing-store.ts'
import type { ServiceDef } from './platform/service.ts'
import { invoiceService } from './invoice/service.ts'
import { flagsService } from './flags/service.ts'
import { webhooksService } from './webhooks/service.ts'
import { LAYOUT_COLLECTION } from './platform/partitioned.ts'
import { SECRET_KEYS_COLLECTION } from './platform/secret-box.ts'

export const SERVICES: ServiceDef[] = [invoiceService, flagsService, webhooksService]

export function serviceByName(name: string): ServiceDef {
  const s = SERVICES.find((x) => x.name === name)
  if (!s) throw new Error(`unknown service "${name}" (known: ${SERVICES.map((x) => x.name).join(', ')})`)
  return s
}

export const ALL_INDEXES: IndexSpec[] = [accountIndexes, outboxIndexes, ...billingIndexes, ...SERVICES.flatMap((s) => s.indexes)]

/**
 * Every collection the services keep, for snapshots of the embedded engine (it cannot list its
 * collections). Those with indexes come from ALL_INDEXES; the rest are named here, and
 * test/embedded-snapshot.test.ts ("saves every collection the code names") checks that every
 * collection the code names is one of them.
 */
export const ALL_COLLECTIONS = {
  partitioned: ALL_INDEXES.filter((s) => s.partitions).map((s) => s.collection),
  plain: [
    // A partitioned collection may have more index specs (webhook search): it is saved by its slots.
    ...new Set(ALL_INDEXES.filter((s) => !s.partitions && !ALL_INDEXES.some((p) => p.partitions && p.collection === s.collection)).map((s) => s.collection)),
    'ops_readiness',
    'flag_project_counters',
    'newsletter_subscribers',
    'webhook_forward_claims',
    'capture_bodies.files',
    'capture_bodies.chunks',
    LAYOUT_COLLECTION,
    SECRET_KEYS_COLLECTION,
  ],
}
