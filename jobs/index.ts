// Every job the platform runs: each domain contract paired with its processor. Workers register
// from this list; a test checks it covers every contract of src/job-contracts.ts exactly once.
import type { JobDefinition } from '../src/platform/queue/job.ts'
import { invoiceRenderJob } from './invoice-render.ts'
import { invoiceBatchRenderJob } from './invoice-batch-render.ts'
import { outboxSweepJob } from './outbox-sweep.ts'
import { usageResetJob } from './usage-reset.ts'
import { paymentReconcileJob } from './payment-reconcile.ts'
import { invoiceBatchWatchJob } from './invoice-batch-watch.ts'
import { invoiceBatchCallbackJob } from './invoice-batch-callback.ts'
import { invoicesExpireJob } from './invoices-expire.ts'
import { invoicesAbandonedJob } from './invoices-abandoned.ts'
import { captureForwardJob } from './capture-forward.ts'
import { captureReplayJob } from './capture-replay.ts'
import { capturesExpireJob } from './captures-expire.ts'
import { captureForwardResumeJob } from './capture-forward-resume.ts'
import { captureRecoverJob } from './capture-recover.ts'
import { flagChangeDispatchJob } from './flag-change-dispatch.ts'
import { flagWebhookDeliverJob } from './flag-webhook-deliver.ts'
import { flagHistorySweepJob } from './flag-history-sweep.ts'

export const JOBS: JobDefinition[] = [invoiceRenderJob, invoiceBatchRenderJob, usageResetJob, outboxSweepJob, paymentReconcileJob, invoiceBatchWatchJob, invoiceBatchCallbackJob, invoicesExpireJob, invoicesAbandonedJob, captureForwardJob, captureReplayJob, capturesExpireJob, captureForwardResumeJob, captureRecoverJob, flagChangeDispatchJob, flagWebhookDeliverJob, flagHistorySweepJob]
