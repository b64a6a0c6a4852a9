// Queue names by job kind, for tests that look at queues directly. Each name is owned by its
// domain's job contract; this map only gathers them.
import { paymentReconcileContract } from '../../src/platform/billing/job-contracts.ts'
import { outboxSweepContract } from '../../src/platform/queue/outbox.ts'
import * as invoice from '../../src/invoice/job-contracts.ts'
import * as webhooks from '../../src/webhooks/job-contracts.ts'
import * as flags from '../../src/flags/job-contracts.ts'

export const QueueName = {
  InvoiceRender: invoice.invoiceRenderContract.queue,
  InvoiceBatchRender: invoice.invoiceBatchRenderContract.queue,
  InvoiceBatchWatch: invoice.invoiceBatchWatchContract.queue,
  InvoiceBatchCallback: invoice.invoiceBatchCallbackContract.queue,
  InvoicesExpire: invoice.invoicesExpireContract.queue,
  InvoicesAbandoned: invoice.invoicesAbandonedContract.queue,
  UsageReset: invoice.usageResetContract.queue,
  CaptureForward: webhooks.captureForwardContract.queue,
  CaptureReplay: webhooks.captureReplayContract.queue,
  CapturesExpire: webhooks.capturesExpireContract.queue,
  CaptureForwardResume: webhooks.captureForwardResumeContract.queue,
  CaptureRecover: webhooks.captureRecoverContract.queue,
  FlagChangeDispatch: flags.flagChangeDispatchContract.queue,
  FlagWebhookDeliver: flags.flagWebhookDeliverContract.queue,
  FlagHistorySweep: flags.flagHistorySweepContract.queue,
  PaymentReconcile: paymentReconcileContract.queue,
  OutboxSweep: outboxSweepContract.queue,
} as const
