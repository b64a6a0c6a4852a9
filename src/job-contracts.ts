// Every job contract the platform knows, from every domain: the registry the outbox sweep
// re-enqueues by and the operations pages list queues from. Workers pair these with processors
// (jobs/index.ts); a test checks that every contract has exactly one.
import type { JobContract } from './platform/queue/job.ts'
import { paymentReconcileContract } from './platform/billing/job-contracts.ts'
import { outboxSweepContract } from './platform/queue/outbox.ts'
import { invoiceJobContracts } from './invoice/job-contracts.ts'
import { webhooksJobContracts } from './webhooks/job-contracts.ts'
import { flagsJobContracts } from './flags/job-contracts.ts'

export const JOB_CONTRACTS: JobContract[] = [...invoiceJobContracts, ...webhooksJobContracts, ...flagsJobContracts, paymentReconcileContract, outboxSweepContract]

export const ALL_QUEUES: string[] = JOB_CONTRACTS.map((c) => c.queue)
