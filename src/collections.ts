// Every MongoDB index and collection the platform keeps, from every domain. Light on purpose: a
// worker process needs these (it may be the first to open the store) but none of the services'
// routes, which src/services.ts loads.
import { accountIndexes } from './platform/accounts.ts'
import { consoleSessionIndexes } from './platform/http/console-session.ts'
import type { IndexSpec } from './platform/store/mongo.ts'
import { outboxIndexes } from './platform/queue/outbox.ts'
import { billingIndexes } from './platform/billing/billing-store.ts'
import { invoiceServiceIndexes } from './invoice/indexes.ts'
import { flagsServiceIndexes } from './flags/indexes.ts'
import { webhooksServiceIndexes } from './webhooks/indexes.ts'
import { LAYOUT_COLLECTION } from './platform/store/partitioned.ts'
import { SECRET_KEYS_COLLECTION } from './platform/secret-box.ts'

export const ALL_INDEXES: IndexSpec[] = [accountIndexes, consoleSessionIndexes, outboxIndexes, ...billingIndexes, ...invoiceServiceIndexes, ...flagsServiceIndexes, ...webhooksServiceIndexes]

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
